package githubtest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// GitRemote serves bare repositories over git's smart HTTP protocol with
// the real `git http-backend` (through net/http/cgi), behind basic auth:
// user "x-access-token" and a password Auth accepts, as GitHub takes an
// installation token.
type GitRemote struct {
	URL  string
	root string
	// Auth checks a token for owner/repo; nil accepts none.
	auth func(token, owner, repo string) bool
	// Denied counts refused requests.
	Denied atomic.Int64
	// Workflows, when set, tells whether a token may push workflow files
	// (GitHub's workflows permission). A push with a token that may not,
	// whose commits touch .github/workflows/, is refused as GitHub refuses
	// it ("refusing to allow a GitHub App to create or update workflow
	// ... without `workflows` permission"). Set it before pushes start.
	Workflows func(token string) bool
}

// NewGitRemote starts a git remote whose basic auth asks auth (for example
// Server.ValidToken). It needs git on PATH; it closes when the test ends.
func NewGitRemote(t testing.TB, auth func(token, owner, repo string) bool) *GitRemote {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("githubtest: git --exec-path: %v", err)
	}
	g := &GitRemote{root: t.TempDir(), auth: auth}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + g.root, "GIT_HTTP_EXPORT_ALL=1",
			// GitHub serves any commit reachable from a ref by its SHA
			// (a merge base, a pushed commit): so does the fake.
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=uploadpack.allowReachableSHA1InWant", "GIT_CONFIG_VALUE_0=true"},
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		user, pass, ok := r.BasicAuth()
		if len(parts) < 3 || !ok || user != "x-access-token" || g.auth == nil ||
			!g.auth(pass, parts[0], strings.TrimSuffix(parts[1], ".git")) {
			g.Denied.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if g.Workflows != nil && !g.Workflows(pass) {
			b := *backend
			b.Env = append(slices.Clone(b.Env), noWorkflowsEnv+"=1")
			b.ServeHTTP(w, r)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	g.URL = hs.URL
	remotes.Store(g.URL, g)
	t.Cleanup(func() { remotes.Delete(g.URL) })
	return g
}

// noWorkflowsEnv marks a push whose token lacks the workflows permission.
const noWorkflowsEnv = "PATCHWRIGHT_FAKE_NO_WORKFLOWS"

// receiveHook refuses, for a repository whose rules require signed
// commits (RequireSignedCommits), new commits the fake's API did not make
// and sign, as GitHub refuses them (GH013); and, for a push marked
// noWorkflowsEnv, new commits that add, change or delete a file under
// .github/workflows/.
const receiveHook = `#!/bin/sh
z=0000000000000000000000000000000000000000
while read old new ref; do
	[ "$new" = "$z" ] && continue
	if [ "$old" = "$z" ]; then commits=$(git rev-list "$new" --not --branches); else commits=$(git rev-list "$old..$new"); fi
	for c in $commits; do
		if [ -f ` + signaturesOn + ` ] && ! grep -qx "$c" ` + verifiedFile + ` 2>/dev/null; then
			echo "error: GH013: Repository rule violations found for $ref." >&2
			echo "- Commits must have verified signatures. Found 1 violation: $c" >&2
			exit 1
		fi
		[ -n "$` + noWorkflowsEnv + `" ] || continue
		f=$(git diff-tree --root --no-commit-id --name-only -r "$c" | grep '^\.github/workflows/' | head -n 1)
		if [ -n "$f" ]; then
			echo "refusing to allow a GitHub App to create or update workflow \` + "`" + `$f\` + "`" + ` without \` + "`" + `workflows\` + "`" + ` permission" >&2
			exit 1
		fi
	done
done
exit 0
`

// CloneURL is the https-style URL of owner/repo.
func (g *GitRemote) CloneURL(owner, repo string) string {
	return g.URL + "/" + owner + "/" + repo + ".git"
}

// Dir is the bare repository's directory.
func (g *GitRemote) Dir(owner, repo string) string {
	return filepath.Join(g.root, owner, repo+".git")
}

// Create makes owner/repo with files committed on branch, by a fixed
// author and date so hashes are stable, and enables pushes over HTTP.
func (g *GitRemote) Create(t testing.TB, owner, repo, branch string, files map[string]string) {
	t.Helper()
	work := t.TempDir()
	for name, content := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, work, "init", "-q", "-b", branch)
	Git(t, work, "add", "-A")
	Git(t, work, "commit", "-q", "-m", "initial")
	bare := g.Dir(owner, repo)
	Git(t, "", "init", "-q", "--bare", "-b", branch, bare)
	Git(t, bare, "config", "http.receivepack", "true")
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(receiveHook), 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, work, "push", "-q", bare, branch)
}

// Head returns the commit branch points at in owner/repo, or "" if the
// branch does not exist.
func (g *GitRemote) Head(t testing.TB, owner, repo, branch string) string {
	t.Helper()
	out, err := gitCmd(g.Dir(owner, repo), "rev-parse", "--verify", "-q", "refs/heads/"+branch).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Log lists the commits of owner/repo reachable from head and not from
// base, oldest first, with their files (base "": head alone), for a
// Repo.Log the fake reads without a remote. Commits are linked to no
// account.
func (g *GitRemote) Log(t testing.TB, owner, repo, base, head string) []GitCommit {
	t.Helper()
	args := []string{"-1", head}
	if base != "" {
		args = []string{base + ".." + head}
	}
	cs, err := gitLog(g.Dir(owner, repo), args...)
	if err != nil {
		return nil
	}
	return cs
}

// Git runs git in dir (or the current directory when dir is empty) with a
// fixed identity and date, failing the test on error; it returns stdout.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := gitCmd(dir, args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+os.TempDir(),
	)
	return cmd
}

// RefusePushes makes owner/repo decline every push with message on the
// client's stderr, as a branch protection rule does ("GH006: Protected
// branch update failed ..."): the ref update is reported as refused. A
// ref update through the API is refused with 422 and message.
func (g *GitRemote) RefusePushes(t testing.TB, owner, repo, message string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(g.Dir(owner, repo), refusedFile), []byte(message), 0o644); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(g.Dir(owner, repo), "hooks", "pre-receive")
	script := "#!/bin/sh\necho " + shellQuote("error: "+message) + " >&2\nexit 1\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
