//go:build e2e

package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// A retry clones the agent branch, which an earlier attempt's model
// wrote; its first setup runs on the default branch's commit instead
// (retrysetup.go).

// agentBranch commits files over main on a new branch agent/issue-1 of
// repo, as an earlier attempt would have pushed them, and goes back to
// main.
func agentBranch(t *testing.T, repo string, files map[string]string) {
	t.Helper()
	gitIn(t, repo, "checkout", "-q", "-b", "agent/issue-1")
	for p, content := range files {
		full := filepath.Join(repo, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "the last attempt")
	gitIn(t, repo, "checkout", "-q", "main")
}

// vendorPoison vendors the modules and rewrites the vendored textcase so
// that Title changes nothing: `go test` reads vendor/ before the cache.
const vendorPoison = `go mod vendor && printf 'package textcase\n\nfunc Title(s string) string { return s }\n' > vendor/example.com/textcase/textcase.go`

// TestRetrySetupRunsNoEarlierAttemptCode: the earlier attempt broke
// Title and made the configured setup (its Makefile, or deps.sh on the
// public-shaped image, which has no make) vendor a rewritten textcase
// into the tree, where `go test` would read it. The retry's model only
// adds a note. Setup runs on the default branch's commit, whose setup
// only downloads, so the final checks build the broken Title against the
// real module and the run fails; run on the agent branch's tree, setup
// planted the vendor/ copy and the run ended verified.
func TestRetrySetupRunsNoEarlierAttemptCode(t *testing.T) {
	sandboxtest.EndToEnd(t)
	for image, setup := range trustImages(t) {
		t.Run(filepath.Base(strings.Split(image, ":")[0]), func(t *testing.T) {
			engine := sandboxtest.NewDocker(t, docker.Options{})
			vol := trustVolume(t)
			sum := fillTextcaseCache(t, engine, image, vol)
			files := trustNames(sum, "setup:\n  - "+setup+"\nverify:\n  - name: test\n    run: go test ./...\n")
			repo := gitRepo(t, files)
			agentBranch(t, repo, map[string]string{
				"names.go": namesGo("name"),
				"Makefile": "deps:\n\t" + strings.ReplaceAll(vendorPoison, "$", "$$") + "\n",
				"deps.sh":  vendorPoison + "\n",
			})
			res, out, _ := scenario{
				repo: repo, branch: "agent/issue-1", configBranch: "main", image: image, cacheVolume: vol,
				issue: agent.Issue{Title: "Badge names", Body: "Simplify Title."},
				wire:  provider.NameOpenAI,
				turns: []pt.Turn{
					call("write_file", `{"path":"NOTES.md","content":"Title is simpler.\n"}`),
					call("finish", `{"summary":"Title is simpler."}`),
				},
			}.run(t)
			if res.Outcome == verify.Verified || len(res.Checks) != 2 || res.Checks[1].Passed {
				t.Fatalf("outcome %s (%s), checks %+v: want the final check to fail on the real module\n%s", res.Outcome, res.Reason, res.Checks, readLedger(t, out))
			}
			if strings.Contains(readLedger(t, out), "go mod vendor") {
				t.Error("the ledger shows the earlier attempt's setup command ran")
			}
		})
	}
}

// TestRetrySetupOnTheDefaultTree: a retry's configured setup runs on the
// default branch's commit (no file of the agent branch is there) with the
// setup-only secrets, as a first run's does; what it made stays under
// the agent branch's files, which the model then reads, and the file it
// wrote the secret into is gone.
func TestRetrySetupOnTheDefaultTree(t *testing.T) {
	value := strings.Repeat("Kw4", 4) + "-registry-token"
	files := calcFiles(false)
	files[".github/agent.yml"] = `setup:
  - if [ -e notes.txt ]; then echo "setup sees the agent branch"; else echo "setup sees the default branch"; fi
  - test -n "$REG_TOKEN" && echo made by setup > setup.out && echo "token=$REG_TOKEN" > .regrc
` + cheapConfig
	repo := gitRepo(t, files)
	agentBranch(t, repo, map[string]string{"notes.txt": "the last attempt\n"})
	res, out, _ := scenario{
		repo: repo, branch: "agent/issue-1", configBranch: "main",
		issue: agent.Issue{Title: "Look", Body: "Look around."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"notes.txt"}`),
			call("read_file", `{"path":"setup.out"}`),
			call("read_file", `{"path":".regrc"}`),
			call("finish", `{"summary":"Looked."}`),
		},
		tune: func(e *Executor) {
			e.SetupSecrets = secrets.SetupSecrets{repo: {"REG_TOKEN": value}}
		},
	}.run(t)
	ledgerText := readLedger(t, out)
	for _, want := range []string{"setup sees the default branch", `"type":"` + ledger.TypeSetupSecrets + `"`} {
		if !strings.Contains(ledgerText, want) {
			t.Errorf("the ledger has no %q:\n%s", want, ledgerText)
		}
	}
	reads := toolResults(t, out, "read_file")
	if len(reads) != 3 || !strings.Contains(reads[0], "the last attempt") || !strings.Contains(reads[1], "made by setup") || strings.Contains(reads[2], value) {
		t.Errorf("the model read %q: want the agent branch's notes.txt, setup's setup.out, and no .regrc", reads)
	}
	if strings.Contains(ledgerText, value) || strings.Contains(res.Body, value) {
		t.Error("the setup secret's value is in the ledger or the body")
	}
}
