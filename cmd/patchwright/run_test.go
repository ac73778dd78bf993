package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify/findings"
)

const calcGo = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

const calcTest = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"

// userRepo is a git repository as a user has it: a Go module whose test
// fails, committed on main, plus an uncommitted edit and an untracked
// file.
func userRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	write("calc.go", calcGo)
	write("calc_test.go", calcTest)
	gitCmd(t, dir, "init", "-q", "-b", "main")
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
	write("calc_test.go", calcTest+"\n// work in progress\n")
	write("notes.txt", "my notes\n")
	return dir
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// snapshot hashes every file of the working tree, the index and HEAD:
// everything of the user's that a run must not touch.
func snapshot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		m[rel] = sha256.Sum256(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".git/index", ".git/HEAD", ".git/refs/heads/main"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		m[name] = sha256.Sum256(data)
	}
	return m
}

// TestRunVerified drives `patchwright run` end to end: a real clone,
// sandbox and checks, the OpenAI wire through the official SDK. The model
// reads, searches, calls a method that does not exist, sees the compiler
// error from verify, fixes it and finishes.
func TestRunVerified(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.Image(t)
	repo := userRepo(t)
	before := snapshot(t, repo)
	issueFile := filepath.Join(t.TempDir(), "issue.md")
	os.WriteFile(issueFile, []byte("# Add returns the difference\n\nAdd(2, 3) returns -1 instead of 5.\n"), 0o644)
	call := func(name, args string) pt.Turn { return pt.Calls(pt.Call(name, args)) }
	srv := pt.New(t,
		call("list_files", `{}`),
		call("search", `{"pattern":"func Add"}`),
		call("read_file", `{"path":"calc.go"}`),
		call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a.Plus(b)"}]}`),
		call("verify", `{}`),
		call("edit", `{"edits":[{"path":"calc.go","old_text":"return a.Plus(b)","new_text":"return a + b"}]}`),
		call("finish", `{"summary":"Add subtracted b instead of adding it; it now returns a + b."}`),
	)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	out := filepath.Join(t.TempDir(), "out")
	// The run keeps the repository's cache volume for later runs; this
	// test's repository is gone afterwards, so its volume goes too.
	volume := pipeline.RepoCacheVolume(repo)
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", "-f", volume).Run() })
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--repo", repo, "--issue-file", issueFile,
		"--model", "openai:" + pt.OpenAIModel, "--image", image, "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if err := exec.Command("docker", "volume", "inspect", volume).Run(); err != nil {
		t.Errorf("the run left no cache volume %s for its repository: %v", volume, err)
	}
	for _, want := range []string{"baseline", "agent · step 5 · verify", "final"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr.String())
		}
	}

	var res pipeline.Result
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "verified" || res.Branch != "agent/add-returns-the-difference" || res.Steps != 7 {
		t.Fatalf("result: %s", data)
	}

	// The model saw the compiler error in the request after verify.
	reqs := srv.Requests()
	last := reqs[5].Messages[len(reqs[5].Messages)-1]
	if len(last.ToolResults) != 1 || !strings.Contains(last.ToolResults[0].Content, "a.Plus undefined") {
		t.Errorf("the request after verify does not carry the compiler error: %+v", last)
	}

	// The branch holds exactly the change, on top of main, named after
	// the issue.
	if got := gitCmd(t, repo, "rev-parse", res.Branch); got != res.HeadCommit {
		t.Errorf("branch at %s, result says %s", got, res.HeadCommit)
	}
	if got := gitCmd(t, repo, "rev-parse", res.Branch+"^"); got != res.BaseCommit || got != gitCmd(t, repo, "rev-parse", "main") {
		t.Errorf("branch parent %s, base %s", got, res.BaseCommit)
	}
	if diff := gitCmd(t, repo, "diff", "--numstat", "main", res.Branch); diff != "1\t1\tcalc.go" {
		t.Errorf("branch diff %q, want calc.go only, one line", diff)
	}
	if got := gitCmd(t, repo, "show", res.Branch+":calc.go"); !strings.Contains(got, "return a + b") {
		t.Errorf("calc.go on the branch:\n%s", got)
	}
	if subject := gitCmd(t, repo, "log", "-1", "--format=%s", res.Branch); subject != "Add returns the difference" {
		t.Errorf("commit subject %q", subject)
	}

	// pr.md shows the baseline failure and the final pass.
	body, err := os.ReadFile(filepath.Join(out, "pr.md"))
	if err != nil {
		t.Fatal(err)
	}
	var testRow string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "| `test` |") {
			testRow = line
		}
	}
	if !strings.Contains(testRow, "❌") || !strings.Contains(testRow, "✅") || strings.Index(testRow, "❌") > strings.Index(testRow, "✅") {
		t.Errorf("test row does not show a baseline failure and a final pass: %q\n%s", testRow, body)
	}
	if !strings.Contains(string(body), "**Outcome: verified**") || !strings.Contains(string(body), "Add(2, 3) = -1, want 5") {
		t.Errorf("pr.md:\n%s", body)
	}
	if _, err := os.Stat(filepath.Join(out, "ledger.jsonl")); err != nil {
		t.Error(err)
	}

	// The user's working tree, index and HEAD are byte-identical.
	after := snapshot(t, repo)
	for name, h := range before {
		if after[name] != h {
			t.Errorf("%s changed", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files appeared in the working tree: %d before, %d after", len(before), len(after))
	}
}

// TestRunUsageErrors: each bad invocation exits 1 with one line naming
// the problem.
func TestRunUsageErrors(t *testing.T) {
	repo := userRepo(t)
	issueFile := filepath.Join(t.TempDir(), "issue.md")
	os.WriteFile(issueFile, []byte("# Fix Add\n\nbody\n"), 0o644)
	badIssue := filepath.Join(t.TempDir(), "bad.md")
	os.WriteFile(badIssue, []byte("no title line\n"), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	badPolicy := filepath.Join(t.TempDir(), "policy.yml")
	os.WriteFile(badPolicy, []byte("defaults: {exclusions: [x]}\n"), 0o644)
	anthropicOnly := filepath.Join(t.TempDir(), "models.yml")
	os.WriteFile(anthropicOnly, []byte("defaults: {models: [\"anthropic:*\"]}\n"), 0o644)
	base := func(extra ...string) []string {
		return append([]string{"run", "--out", out}, extra...)
	}
	tests := map[string]struct {
		args   []string
		env    map[string]string
		docker bool
		want   string
	}{
		"missing repo":      {args: base("--issue-file", issueFile, "--model", "openai:gpt-4.1"), want: "--repo is required"},
		"not a git repo":    {args: base("--repo", t.TempDir(), "--issue-file", issueFile, "--model", "openai:gpt-4.1"), want: "not a git repository"},
		"repo missing":      {args: base("--repo", "/nonexistent/repo", "--issue-file", issueFile, "--model", "openai:gpt-4.1"), want: "no such file or directory"},
		"unknown provider":  {args: base("--repo", repo, "--issue-file", issueFile, "--model", "mistral:large"), want: `unknown provider "mistral"`},
		"missing key":       {args: base("--repo", repo, "--issue-file", issueFile, "--model", "anthropic:claude-sonnet-4-5"), want: "ANTHROPIC_API_KEY is not set"},
		"no model":          {args: base("--repo", repo, "--issue-file", issueFile), want: "no model: pass --model"},
		"no issue":          {args: base("--repo", repo, "--model", "openai:gpt-4.1"), want: "no issue: pass --issue-file"},
		"both issue forms":  {args: base("--repo", repo, "--issue-file", issueFile, "--title", "x", "--model", "openai:gpt-4.1"), want: "not both"},
		"issue file bad":    {args: base("--repo", repo, "--issue-file", badIssue, "--model", "openai:gpt-4.1"), want: `first line must be the title as "# Title"`},
		"issue file absent": {args: base("--repo", repo, "--issue-file", "/nonexistent.md", "--model", "openai:gpt-4.1"), want: "--issue-file: open /nonexistent.md"},
		"negative steps":    {args: base("--repo", repo, "--title", "x", "--max-steps", "-1", "--model", "openai:gpt-4.1"), want: "--max-steps -1"},
		"stray argument":    {args: base("--repo", repo, "--title", "x", "--model", "openai:gpt-4.1", "extra"), want: "unexpected arguments"},
		"policy file bad":   {args: base("--repo", repo, "--title", "x", "--model", "openai:gpt-4.1", "--policy-file", badPolicy), want: `--policy-file: policy file ` + badPolicy + `: line 1: unknown key "exclusions"`},
		"policy from env":   {args: base("--repo", repo, "--title", "x", "--model", "openai:gpt-4.1"), env: map[string]string{"PATCHWRIGHT_POLICY_FILE": badPolicy}, want: `--policy-file: policy file ` + badPolicy},
		"model not allowed": {args: base("--repo", repo, "--title", "x", "--model", "openai:gpt-4.1", "--policy-file", anthropicOnly), docker: true,
			want: "the model openai:gpt-4.1 is not allowed by the operator's policy (defaults), whose models are anthropic:*"},
		"image missing": {args: base("--repo", repo, "--issue-file", issueFile, "--model", "openai:gpt-4.1", "--image", "patchwright-no-such-image:1"),
			docker: true, want: `sandbox image "patchwright-no-such-image:1" is not on the Docker engine and is not pulled`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.docker && testing.Short() {
				t.Skip("needs the Docker engine: run without -short with dockerd running")
			}
			for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "PATCHWRIGHT_MODEL", "PATCHWRIGHT_POLICY_FILE"} {
				t.Setenv(k, tc.env[k])
			}
			t.Setenv("OPENAI_API_KEY", "test-key") // never used: every case stops before the model
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			// Progress lines may come first; the error is one line.
			var errLines []string
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				if !strings.HasPrefix(line, "[") {
					errLines = append(errLines, line)
				}
			}
			msg := strings.Join(errLines, "\n")
			if code != 1 || len(errLines) != 1 || !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "patchwright run: ") {
				t.Fatalf("exit %d, stderr %q; want 1 and one line with %q", code, msg, tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q", stdout.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err == nil {
		t.Error("a failed invocation wrote result.json")
	}
}

// TestPrintResultJSON: --json prints result.json's object and nothing
// else on stdout.
func TestPrintResultJSON(t *testing.T) {
	var out bytes.Buffer
	res := &pipeline.Result{Outcome: "no_change", Reason: "the run ended without changing any file", FilesChanged: []string{}, Checks: []pipeline.CheckSummary{}, NotVerified: []string{}, Findings: []findings.Finding{}}
	printResult(&out, runOptions{json: true}, res)
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out.String())
	}
	if m["outcome"] != "no_change" || len(m) != 11 || m["findings"] == nil {
		t.Errorf("result: %v", m)
	}
}

// TestRunPolicyExcludes: `patchwright run` applies the operator's policy
// file (its defaults entry) as a worker's job does: a path only the
// policy excludes never reaches the model, by name or content, through
// the file tools, search or the repository map, and the body's
// Configuration line names the policy.
func TestRunPolicyExcludes(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.Image(t)
	repo := userRepo(t)
	if err := os.MkdirAll(filepath.Join(repo, "customer-data"), 0o755); err != nil {
		t.Fatal(err)
	}
	// cards.csv is read by name; the other file is never named, so its
	// name in a request means something listed it.
	os.WriteFile(filepath.Join(repo, "customer-data", "cards.csv"), []byte("name,card\nCANARY-POLICY-1,4111\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "customer-data", "zz-unnamed-canary.csv"), []byte("CANARY-POLICY-2\n"), 0o644)
	gitCmd(t, repo, "add", "customer-data")
	gitCmd(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "data")
	policy := filepath.Join(t.TempDir(), "policy.yml")
	os.WriteFile(policy, []byte("defaults: {exclude: [customer-data/], models: [\"openai:gpt-4.1*\"]}\n"), 0o644)
	call := func(name, args string) pt.Turn { return pt.Calls(pt.Call(name, args)) }
	srv := pt.New(t,
		call("list_files", `{}`),
		call("read_file", `{"path":"customer-data/cards.csv"}`),
		call("search", `{"pattern":"CANARY"}`),
		call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
		call("finish", `{"summary":"Add now adds."}`),
	)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("PATCHWRIGHT_POLICY_FILE", policy) // the flag's default, as an operator sets it
	out := filepath.Join(t.TempDir(), "out")
	volume := pipeline.RepoCacheVolume(repo)
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", "-f", volume).Run() })
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--repo", repo, "--title", "Add subtracts", "--body", "Add(2, 3) is -1.",
		"--model", "openai:" + pt.OpenAIModel, "--image", image, "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests to the model, want 5", len(reqs))
	}
	for i, req := range reqs {
		for _, canary := range []string{"CANARY-", "zz-unnamed-canary"} {
			if strings.Contains(string(req.Body), canary) {
				t.Errorf("request %d to the model carries %q", i, canary)
			}
		}
	}
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "is excluded from what the model may read") {
		t.Errorf("the read of the excluded file was not refused as excluded:\n%s", last)
	}
	body, err := os.ReadFile(filepath.Join(out, "pr.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Configuration: the operator's policy (defaults) applied", "The run's models are among those it allows: `openai:gpt-4.1*`."} {
		if !strings.Contains(string(body), want) {
			t.Errorf("pr.md has no %q:\n%s", want, body)
		}
	}
}
