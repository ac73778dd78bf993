package githubtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Git Data endpoints (blobs, trees, commits, refs) write into the
// repository's bare repository of its GitRemote, so a clone of the branch
// shows what they made. A commit made through them with no author,
// committer or signature is the app's, signed by GitHub: the fake lists
// it as verified, and a repository whose rules require signed commits
// (GitRemote.RequireSignedCommits) takes only such commits, over git or
// through a ref update.

// Files of a bare repository the fake keeps beside git's own.
const (
	verifiedFile  = "patchwright-verified"
	signaturesOn  = "patchwright-require-signatures"
	refusedFile   = "patchwright-refuse-updates"
	zeroSHA       = "0000000000000000000000000000000000000000"
	ruleViolation = "Repository rule violations found\n\nCommits must have verified signatures.\n\n"
)

// remotes are the GitRemotes of this test binary by URL, so the API finds
// a repository's bare repository from its CloneURL.
var remotes sync.Map // URL → *GitRemote

func (s *Server) gitDataRoutes(inst func(pattern, perm string, h http.HandlerFunc)) {
	inst("POST /repos/{owner}/{repo}/git/blobs", "contents=write", s.createBlob)
	inst("POST /repos/{owner}/{repo}/git/trees", "contents=write", s.createTree)
	inst("POST /repos/{owner}/{repo}/git/commits", "contents=write", s.createGitCommit)
	inst("GET /repos/{owner}/{repo}/git/ref/{ref...}", "contents=read", s.getRef)
	inst("POST /repos/{owner}/{repo}/git/refs", "contents=write", s.createRef)
	inst("PATCH /repos/{owner}/{repo}/git/refs/{ref...}", "contents=write", s.updateRef)
}

// bareDir is the bare repository of the request's repository, answering
// 404 when the repository or its remote is unknown.
func (s *Server) bareDir(w http.ResponseWriter, r *http.Request) (string, bool) {
	rp, ok := s.repo(w, r)
	if !ok {
		return "", false
	}
	dir := bareOf(rp)
	if dir == "" {
		fail(w, http.StatusNotFound, "Not Found")
	}
	return dir, dir != ""
}

// bareOf is rp's bare repository; "" when no GitRemote holds it.
func bareOf(rp *Repo) string {
	var dir string
	remotes.Range(func(k, v any) bool {
		if strings.HasPrefix(rp.CloneURL, k.(string)+"/") {
			dir = v.(*GitRemote).Dir(rp.Owner, rp.Name)
		}
		return dir == ""
	})
	return dir
}

// bare runs git in dir with stdin and extra environment; it returns
// trimmed stdout.
func bare(dir string, stdin []byte, env []string, args ...string) (string, error) {
	cmd := gitCmd(dir, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
	}
	return strings.TrimSpace(string(out)), err
}

func objectType(dir, sha string) string {
	t, _ := bare(dir, nil, nil, "cat-file", "-t", sha)
	return t
}

func unprocessable(w http.ResponseWriter, msg string) {
	fail(w, http.StatusUnprocessableEntity, msg)
}

func (s *Server) gitURL(r *http.Request, kind, sha string) string {
	return fmt.Sprintf("%srepos/%s/%s/git/%s/%s", s.URL, r.PathValue("owner"), r.PathValue("repo"), kind, sha)
}

func (s *Server) createBlob(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.bareDir(w, r)
	if !ok {
		return
	}
	var req struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Content == nil {
		unprocessable(w, "Invalid request.\n\n\"content\" wasn't supplied.")
		return
	}
	content := []byte(*req.Content)
	switch req.Encoding {
	case "", "utf-8":
	case "base64":
		var err error
		if content, err = base64.StdEncoding.DecodeString(*req.Content); err != nil {
			unprocessable(w, "Invalid request.\n\ncontent is not valid Base64")
			return
		}
	default:
		unprocessable(w, "Invalid request.\n\nencoding must be one of utf-8, base64")
		return
	}
	sha, err := bare(dir, content, nil, "hash-object", "-w", "--stdin")
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "url": s.gitURL(r, "blobs", sha)})
}

type treeEntryReq struct {
	Path    string          `json:"path"`
	Mode    string          `json:"mode"`
	Type    string          `json:"type"`
	SHA     json.RawMessage `json:"sha"` // absent, null (delete) or a SHA
	Content *string         `json:"content"`
}

// createTree builds the tree in a throwaway index: base_tree read in,
// each entry added or (sha null) removed, then written.
func (s *Server) createTree(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.bareDir(w, r)
	if !ok {
		return
	}
	var req struct {
		BaseTree string         `json:"base_tree"`
		Tree     []treeEntryReq `json:"tree"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	tmp, err := os.MkdirTemp("", "fake-index-")
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if req.BaseTree != "" {
		if objectType(dir, req.BaseTree) != "tree" {
			unprocessable(w, "Invalid tree info")
			return
		}
		if _, err := bare(dir, nil, env, "read-tree", req.BaseTree); err != nil {
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	var info strings.Builder
	for _, e := range req.Tree {
		line, msg := s.indexLine(dir, e)
		if msg != "" {
			unprocessable(w, msg)
			return
		}
		info.WriteString(line)
	}
	if _, err := bare(dir, []byte(info.String()), env, "update-index", "--index-info"); err != nil {
		unprocessable(w, "GitRPC::BadObjectState: "+err.Error())
		return
	}
	sha, err := bare(dir, nil, env, "write-tree")
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "url": s.gitURL(r, "trees", sha), "truncated": false})
}

// indexLine is one entry as `git update-index --index-info` takes it, or
// GitHub's 422 message for a bad entry.
func (s *Server) indexLine(dir string, e treeEntryReq) (string, string) {
	if e.Path == "" || strings.HasPrefix(e.Path, "/") || slices.Contains(strings.Split(e.Path, "/"), "..") {
		return "", "tree.path contains a malformed path component"
	}
	if !slices.Contains([]string{"100644", "100755", "120000"}, e.Mode) {
		// 040000 and 160000 are GitHub's too; Patchwright sends neither.
		return "", fmt.Sprintf("tree.mode %q is not supported by this fake; GitHub takes 100644, 100755, 040000, 160000, 120000", e.Mode)
	}
	if string(e.SHA) == "null" {
		return "0 " + zeroSHA + "\t" + e.Path + "\n", ""
	}
	var sha string
	switch {
	case e.Content != nil:
		var err error
		if sha, err = bare(dir, []byte(*e.Content), nil, "hash-object", "-w", "--stdin"); err != nil {
			return "", err.Error()
		}
	case len(e.SHA) > 0:
		if err := json.Unmarshal(e.SHA, &sha); err != nil || objectType(dir, sha) != "blob" {
			return "", "tree.sha " + string(e.SHA) + " is not a valid blob"
		}
	default:
		return "", "Must supply either tree.sha or tree.content"
	}
	return e.Mode + " " + sha + "\t" + e.Path + "\n", ""
}

type personReq struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

// createGitCommit makes the commit as GitHub does for an app: author the
// app's bot, committer GitHub, signed (verified) when the request named
// no author, committer or signature.
func (s *Server) createGitCommit(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.bareDir(w, r)
	if !ok {
		return
	}
	var req struct {
		Message   *string    `json:"message"`
		Tree      string     `json:"tree"`
		Parents   []string   `json:"parents"`
		Author    *personReq `json:"author"`
		Committer *personReq `json:"committer"`
		Signature *string    `json:"signature"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	switch {
	case req.Message == nil:
		unprocessable(w, "Invalid request.\n\n\"message\" wasn't supplied.")
		return
	case objectType(dir, req.Tree) != "tree":
		unprocessable(w, "Tree SHA does not exist")
		return
	}
	args := []string{"commit-tree", req.Tree, "-F", "-"}
	for _, p := range req.Parents {
		if objectType(dir, p) != "commit" {
			unprocessable(w, "Parent SHA does not exist or is not a commit object")
			return
		}
		args = append(args, "-p", p)
	}
	now := s.now().UTC().Format(time.RFC3339)
	author := personReq{Name: BotLogin, Email: fmt.Sprintf("%d+%s@users.noreply.github.com", BotUserID, BotLogin), Date: now}
	committer := personReq{Name: "GitHub", Email: "noreply@github.com", Date: now}
	verified := req.Author == nil && req.Committer == nil && req.Signature == nil
	if req.Author != nil {
		author, committer = *req.Author, *req.Author
	}
	if req.Committer != nil {
		committer = *req.Committer
	}
	env := []string{"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email, "GIT_AUTHOR_DATE=" + cmpOr(author.Date, now),
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email, "GIT_COMMITTER_DATE=" + cmpOr(committer.Date, now)}
	sha, err := bare(dir, []byte(*req.Message), env, args...)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if verified {
		if err := appendLine(filepath.Join(dir, verifiedFile), sha); err != nil {
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	writeJSON(w, http.StatusCreated, s.gitCommitJSON(r, sha, req.Tree, req.Parents, *req.Message, author, committer, verified))
}

func (s *Server) gitCommitJSON(r *http.Request, sha, tree string, parents []string, msg string, author, committer personReq, verified bool) map[string]any {
	ps := []map[string]any{}
	for _, p := range parents {
		ps = append(ps, map[string]any{"sha": p, "url": s.gitURL(r, "commits", p)})
	}
	ver := map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil}
	if verified {
		ver = map[string]any{"verified": true, "reason": "valid", "verified_at": s.now().UTC().Format(time.RFC3339),
			"signature": "-----BEGIN PGP SIGNATURE-----\n\nfake\n-----END PGP SIGNATURE-----\n", "payload": "tree " + tree + "\n"}
	}
	return map[string]any{"sha": sha, "node_id": "C_" + sha, "url": s.gitURL(r, "commits", sha),
		"author": author, "committer": committer, "message": msg,
		"tree": map[string]any{"sha": tree, "url": s.gitURL(r, "trees", tree)}, "parents": ps, "verification": ver}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *Server) refJSON(r *http.Request, ref, sha string) map[string]any {
	return map[string]any{"ref": ref, "node_id": "REF_" + ref, "url": s.gitURL(r, "refs", strings.TrimPrefix(ref, "refs/")),
		"object": map[string]any{"type": "commit", "sha": sha, "url": s.gitURL(r, "commits", sha)}}
}

func (s *Server) getRef(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.bareDir(w, r)
	if !ok {
		return
	}
	ref := "refs/" + r.PathValue("ref")
	sha, err := bare(dir, nil, nil, "rev-parse", "--verify", "-q", ref)
	if err != nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.refJSON(r, ref, sha))
}

func (s *Server) createRef(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.bareDir(w, r)
	if !ok {
		return
	}
	var req struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if !strings.HasPrefix(req.Ref, "refs/") || strings.Count(req.Ref, "/") < 2 {
		unprocessable(w, "Reference name must start with 'refs/' and have at least two slashes.")
		return
	}
	s.moveRef(w, r, dir, req.Ref, req.SHA, zeroSHA, http.StatusCreated)
}

func (s *Server) updateRef(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.bareDir(w, r)
	if !ok {
		return
	}
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	ref := "refs/" + r.PathValue("ref")
	cur, err := bare(dir, nil, nil, "rev-parse", "--verify", "-q", ref)
	if err != nil {
		unprocessable(w, "Reference does not exist")
		return
	}
	if objectType(dir, req.SHA) != "commit" {
		unprocessable(w, "Object does not exist")
		return
	}
	if _, err := bare(dir, nil, nil, "merge-base", "--is-ancestor", cur, req.SHA); err != nil && !req.Force {
		unprocessable(w, "Update is not a fast forward")
		return
	}
	s.moveRef(w, r, dir, ref, req.SHA, cur, http.StatusOK)
}

// moveRef sets ref to sha only while it is at old (zeroSHA: absent), as
// git's own compare-and-swap, after the repository's rules.
func (s *Server) moveRef(w http.ResponseWriter, r *http.Request, dir, ref, sha, old string, status int) {
	if msg := s.applyRef(r, dir, ref, sha, old); msg != "" {
		unprocessable(w, msg)
		return
	}
	writeJSON(w, status, s.refJSON(r, ref, sha))
}

// applyRef moves ref from old to sha with git's update-ref, which
// compares and swaps under the ref's lock; it returns why not, "" when
// it moved.
func (s *Server) applyRef(r *http.Request, dir, ref, sha, old string) string {
	if objectType(dir, sha) != "commit" {
		return "Object does not exist"
	}
	if msg, err := os.ReadFile(filepath.Join(dir, refusedFile)); err == nil {
		// RefusePushes: a protection rule refuses every update.
		return strings.TrimSpace(string(msg))
	}
	if !signedEnough(dir, sha, old) {
		return ruleViolation
	}
	if f := workflowFile(dir, sha, old); f != "" && !s.requestToken(r).has("workflows=write") {
		return "refusing to allow a GitHub App to create or update workflow `" + f + "` without `workflows` permission"
	}
	if _, err := bare(dir, nil, nil, "update-ref", ref, sha, old); err != nil {
		if old == zeroSHA {
			return "Reference already exists"
		}
		return "Reference cannot be updated"
	}
	return ""
}

// repoNodeID is a repository's GraphQL ID, which updateRefs names it by.
func repoNodeID(rp *Repo) string { return "R_" + rp.Owner + "/" + rp.Name }

// updateRefs is GraphQL's updateRefs for one ref, as Patchwright sends
// it: refused (a GraphQL error, the ref untouched) unless the ref is at
// beforeOid when update-ref takes its lock.
func (s *Server) updateRefs(w http.ResponseWriter, r *http.Request, req graphqlReq) {
	v := req.Variables
	var rp *Repo
	s.mu.Lock()
	for _, x := range s.repos {
		if repoNodeID(x) == v.RepositoryID {
			rp = x
		}
	}
	s.mu.Unlock()
	dir := ""
	if rp != nil {
		dir = bareOf(rp)
	}
	switch {
	case dir == "":
		graphqlError(w, fmt.Sprintf("Could not resolve to a node with the global id of '%s'", v.RepositoryID))
	case !s.requestToken(r).has("contents=write"):
		graphqlError(w, "Resource not accessible by integration")
	case v.Before == "" || v.After == "" || !strings.HasPrefix(v.Name, "refs/"):
		graphqlError(w, "refUpdates need a name, a beforeOid and an afterOid")
	default:
		if msg := s.applyRef(r, dir, v.Name, v.After, v.Before); msg != "" {
			graphqlError(w, "Failed to update ref "+v.Name+": "+msg)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"updateRefs": map[string]any{"clientMutationId": nil}}})
	}
}

// newCommits are the commits moving a ref from old to sha adds.
func newCommits(dir, sha, old string) ([]string, error) {
	args := []string{"rev-list", sha, "--not", "--branches"}
	if old != zeroSHA {
		args = []string{"rev-list", old + ".." + sha}
	}
	out, err := bare(dir, nil, nil, args...)
	return strings.Fields(out), err
}

// workflowFile is a file under .github/workflows/ that moving a ref from
// old to sha adds, changes or deletes; "" for none.
func workflowFile(dir, sha, old string) string {
	commits, _ := newCommits(dir, sha, old)
	for _, c := range commits {
		out, _ := bare(dir, nil, nil, "diff-tree", "--root", "--no-commit-id", "--name-only", "-r", c)
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, ".github/workflows/") {
				return f
			}
		}
	}
	return ""
}

func (s *Server) requestToken(r *http.Request) Token {
	v, _ := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[v]
}

// signedEnough reports whether the commits that moving a ref from old to
// sha adds are all verified, where the repository's rules require it.
func signedEnough(dir, sha, old string) bool {
	if _, err := os.Stat(filepath.Join(dir, signaturesOn)); err != nil {
		return true
	}
	commits, err := newCommits(dir, sha, old)
	if err != nil {
		return false
	}
	verified, _ := os.ReadFile(filepath.Join(dir, verifiedFile))
	listed := strings.Fields(string(verified))
	for _, c := range commits {
		if !slices.Contains(listed, c) {
			return false
		}
	}
	return true
}

// RequireSignedCommits turns on the rule that every commit reaching a
// branch of owner/repo is signed: a git push of a commit the fake did not
// make through the API is refused as GitHub refuses it (GH013), and so is
// a ref update to one.
func (g *GitRemote) RequireSignedCommits(t testing.TB, owner, repo string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(g.Dir(owner, repo), signaturesOn), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Verified reports whether the fake made (and GitHub would have signed)
// commit sha of owner/repo.
func (g *GitRemote) Verified(owner, repo, sha string) bool {
	data, _ := os.ReadFile(filepath.Join(g.Dir(owner, repo), verifiedFile))
	return slices.Contains(strings.Fields(string(data)), sha)
}
