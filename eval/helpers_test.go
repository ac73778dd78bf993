package eval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/sandbox"
)

// hostSandboxes is a sandbox.Runner that runs commands with sh on the
// host, in the workspace: enough to test validation and judging without
// Docker (the Docker tests use the real engine).
type hostSandboxes struct {
	mu    sync.Mutex
	specs []sandbox.Spec
}

func (h *hostSandboxes) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.specs {
		if s.Workspace == spec.Workspace {
			return nil, fmt.Errorf("workspace %s used by two sandboxes", spec.Workspace)
		}
	}
	h.specs = append(h.specs, spec)
	return &hostSandbox{dir: spec.Workspace}, nil
}

type hostSandbox struct{ dir string }

func (s *hostSandbox) Exec(ctx context.Context, c sandbox.Command) (sandbox.Result, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", c.Script)
	cmd.Dir = s.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := sandbox.Result{
		Stdout: sandbox.Output{Head: stdout.Bytes(), Total: int64(stdout.Len())},
		Stderr: sandbox.Output{Head: stderr.Bytes(), Total: int64(stderr.Len())},
	}
	if ee, ok := err.(*exec.ExitError); ok {
		res.ExitCode = ee.ExitCode()
		return res, nil
	}
	return res, err
}

func (s *hostSandbox) DisableNetwork(context.Context) error { return nil }
func (s *hostSandbox) ID() string                           { return "host" }
func (s *hostSandbox) Close() error                         { return nil }

// runGit runs git in dir with a fixed identity and dates.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture describes a small shell task: value.txt says "bug" and must
// say "fixed"; the hidden test checks it.
type fixture struct {
	repo     map[string]string // files at the base commit
	hidden   map[string]string // hidden/ files
	run      string
	existing string
	fix      string // fix.patch; "" for the default, "-" for none
	issue    string
	category string
	language string
}

const defaultFix = `--- a/value.txt
+++ b/value.txt
@@ -1 +1 @@
-bug
+fixed
`

func defaultFixture() fixture {
	return fixture{
		repo:     map[string]string{"value.txt": "bug\n", "README": "a value\n"},
		hidden:   map[string]string{"checks/value_check.sh": "#!/bin/sh\n# the hidden check of the value file\ngrep -qx fixed value.txt || { echo 'value.txt does not say fixed'; exit 1; }\n"},
		run:      "sh checks/value_check.sh",
		existing: "test -f value.txt",
		issue:    "# value.txt is wrong\n\nIt should say fixed.\n",
		category: "bug", language: "go",
	}
}

// makeTask writes a task directory named id under suite and returns it.
func makeTask(t testing.TB, suite, id string, f fixture) string {
	t.Helper()
	dir := filepath.Join(suite, id)
	repo := filepath.Join(dir, "repo")
	writeFiles(t, repo, f.repo)
	runGit(t, repo, "init", "-q", "-b", "main")
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-q", "-m", "base")
	sha := runGit(t, repo, "rev-parse", "HEAD")
	hidden := map[string]string{}
	for k, v := range f.hidden {
		hidden["hidden/"+k] = v
	}
	writeFiles(t, dir, hidden)
	yml := fmt.Sprintf("repo: ./repo\ncommit: %s\nhidden_tests:\n  files: hidden/\n  run: %s\ncategory: %s\nlanguage: %s\n", sha, f.run, f.category, f.language)
	if f.existing != "" {
		yml += "existing_tests: " + f.existing + "\n"
	}
	files := map[string]string{"task.yml": yml, "issue.md": f.issue}
	switch f.fix {
	case "":
		files["fix.patch"] = defaultFix
	case "-":
	default:
		files["fix.patch"] = f.fix
	}
	writeFiles(t, dir, files)
	return dir
}

// fakeRunner plays a run: act gets a work tree of the run's clone at the
// base commit and returns the outcome; when it changed the tree the change
// is committed and pushed to the run's repository, as the pipeline does.
type fakeRunner struct {
	act func(t *testing.T, req RunRequest, tree string) (outcome string)
	t   *testing.T

	mu   sync.Mutex
	reqs []RunRequest
}

func (f *fakeRunner) Run(ctx context.Context, req RunRequest) (RunResult, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	tree := filepath.Join(f.t.TempDir(), "work")
	runGit(f.t, filepath.Dir(tree), "clone", "-q", req.Repo, tree)
	if req.CheckTree != nil {
		if err := req.CheckTree(tree); err != nil {
			return RunResult{Outcome: "error", Reason: err.Error()}, err
		}
	}
	outcome := f.act(f.t, req, tree)
	res := RunResult{Outcome: outcome, Reason: "fake", Steps: 3, Usage: ledger.Usage{InputTokens: 1000, OutputTokens: 100}}
	if runGit(f.t, tree, "status", "--porcelain") == "" {
		return res, nil
	}
	runGit(f.t, tree, "add", "-A")
	runGit(f.t, tree, "commit", "-q", "-m", "change")
	runGit(f.t, tree, "push", "-q", "origin", "HEAD:refs/heads/agent/fix")
	res.HeadCommit = runGit(f.t, tree, "rev-parse", "HEAD")
	for name, body := range map[string]string{"pr.md": "## Summary\n", "result.json": "{}\n"} {
		os.WriteFile(filepath.Join(req.OutDir, name), []byte(body), 0o644)
	}
	return res, nil
}

// applyFix is a fake model that makes the reference fix.
func applyFix(t *testing.T, req RunRequest, tree string) string {
	if err := applyPatch(context.Background(), tree, req.Task.FixPatch); err != nil {
		t.Errorf("apply fix: %v", err)
	}
	return "verified"
}

func doNothing(*testing.T, RunRequest, string) string { return "no_change" }

// fixedClock advances one second per call, so durations are known.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

func testOptions(t *testing.T, runner Runner, sb sandbox.Runner) Options {
	return Options{
		Model: "openai:gpt-4.1", Runner: runner, Sandboxes: sb,
		Out: t.TempDir(), DefaultImage: "test-image", WorkDir: t.TempDir(), Now: fixedClock(),
		Cost: func(u ledger.Usage) (float64, bool) { return float64(u.InputTokens) / 1e6, true },
	}
}
