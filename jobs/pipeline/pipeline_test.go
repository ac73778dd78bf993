package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// calcFiles is a small Go module. With buggy set, Add subtracts and its
// test fails; otherwise every test passes.
func calcFiles(buggy bool) map[string]string {
	op := "+"
	if buggy {
		op = "-"
	}
	return map[string]string{
		"go.mod": "module example.com/calc\n\ngo 1.22\n",
		"calc.go": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a " + op + " b\n}\n\n" +
			"// Double returns twice n.\nfunc Double(n int) int {\n\treturn Add(n, n)\n}\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
	}
}

// cheapConfig replaces detection with one compile of a package that
// imports nothing: a real Go check that costs well under a second, for
// the scenarios where the checks' results do not matter.
const cheapConfig = "verify:\n  - name: build\n    run: go build ./...\n"

// gitRepo makes a git repository in a new directory with files committed
// on branch main, and returns its path.
func gitRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
	return dir
}

// gitIn runs the real git in dir and returns its trimmed output.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(githubtest.Git(t, dir, args...))
}

// branches lists the repository's branches other than main.
func agentBranches(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, b := range strings.Fields(gitIn(t, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/")) {
		if b != "main" {
			out = append(out, b)
		}
	}
	return out
}

// scenario is one pipeline run against a real sandbox and a scripted
// model.
type scenario struct {
	repo     string
	issue    agent.Issue
	wire     string
	turns    []pt.Turn
	maxSteps int
	bound    func(ctx context.Context, dir string) (func() error, error)
	// image overrides the offline test image (sandboxtest.Image).
	image string
	// branch and configBranch are a retry's: the agent branch cloned and
	// the default branch whose configuration is trusted.
	branch, configBranch string
	// cacheVolume overrides the image's shared test cache volume.
	cacheVolume string
	// maxChangeBytes is the Executor's MaxChangeBytes.
	maxChangeBytes int64
	// alone keeps the run from overlapping others, for a test that
	// measures the whole process (its allocations).
	alone bool
	// tune, if set, changes the executor before the run.
	tune func(*Executor)
	// advisories is the job's advisory lookup; nil for none.
	advisories AdvisoryLookup
	// job, if set, changes the job before the run.
	job func(*Job)
}

// run is a whole pipeline run, so a long end-to-end test: see
// sandboxtest.EndToEnd.
func (s scenario) run(t *testing.T) (*Result, string, *pt.Server) {
	t.Helper()
	sandboxtest.EndToEnd(t)
	// Whole runs wait on containers far more than they compute, so they
	// overlap; each has its own job ID, engine client and scripted model.
	if !s.alone {
		t.Parallel()
	}
	image := cmp.Or(s.image, sandboxtest.Image(t))
	engine := sandboxtest.NewDocker(t, docker.Options{})
	srv := pt.New(t, s.turns...)
	p, err := provider.New(s.wire+":"+map[string]string{provider.NameOpenAI: pt.OpenAIModel, provider.NameAnthropic: pt.AnthropicModel}[s.wire], srv.Options(s.wire))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	e := &Executor{
		Sandboxes:      engine,
		Provider:       p,
		Image:          image,
		MaxSteps:       s.maxSteps,
		SandboxLimits:  sandbox.Limits{CPUs: 2},
		CacheVolume:    func(string) string { return cmp.Or(s.cacheVolume, sandboxtest.CacheVolumeFor(image)) },
		BoundWorkspace: s.bound,
		MaxChangeBytes: s.maxChangeBytes,
		RemoveCache:    engine.RemoveCache,
	}
	if s.tune != nil {
		s.tune(e)
	}
	job := Job{ID: "test-" + strings.ReplaceAll(t.Name(), "/", "-"), RepoURL: s.repo, Issue: s.issue, OutDir: out, Publisher: LocalPublisher{},
		Branch: s.branch, ConfigBranch: s.configBranch, Advisories: s.advisories}
	if s.job != nil {
		s.job(&job)
	}
	res, err := e.Execute(context.Background(), job)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns were not used", srv.Remaining())
	}
	return res, out, srv
}

func call(name, args string) pt.Turn { return pt.Calls(pt.Call(name, args)) }

// readResult reads result.json back and checks it has exactly the keys
// of docs/design.md §4.5.
func readResult(t *testing.T, out string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, FileResult))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"base_commit", "branch", "checks", "files_changed", "findings", "head_commit", "not_verified", "outcome", "reason", "steps", "usage"}
	if !slices.Equal(keys, want) {
		t.Errorf("result.json keys %v, want %v", keys, want)
	}
	return m
}

func readBody(t *testing.T, out string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, FileBody))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestPipelineFailed: the tests pass before the change; the model breaks
// Add and claims all tests pass. The final run says otherwise.
func TestPipelineFailed(t *testing.T) {
	repo := gitRepo(t, calcFiles(false))
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
		wire:  provider.NameAnthropic,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a + b","new_text":"return a - b"}]}`),
			call("finish", `{"summary":"Made Double faster. All tests pass."}`),
		},
	}.run(t)
	if res.Outcome != verify.Failed {
		t.Fatalf("outcome %s (%s), want failed", res.Outcome, res.Reason)
	}
	if !strings.Contains(res.Reason, "test") || !strings.Contains(res.Reason, "passed before the change") {
		t.Errorf("reason %q does not name the test that broke", res.Reason)
	}
	body := readBody(t, out)
	for _, want := range []string{
		"**Outcome: failed**",
		"Add(2, 3) = -1, want 5",
		`The model's summary says "All tests pass"`,
		"this is the model's claim only",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pr.md lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "✅ passed |\n") && strings.Count(body, "❌") == 0 {
		t.Errorf("pr.md shows no failure:\n%s", body)
	}
	// A failed change is still committed for the user to look at.
	if res.Branch != "agent/double-is-slow" || gitIn(t, repo, "rev-parse", res.Branch) != res.HeadCommit {
		t.Errorf("branch %q head %q not in the repository", res.Branch, res.HeadCommit)
	}
	readResult(t, out)
}

// TestPipelineSecret: the model writes an AWS-style key; nothing is
// committed and the reason names the rule and file, never the key.
func TestPipelineSecret(t *testing.T) {
	repo := gitRepo(t, map[string]string{
		"go.mod": "module example.com/calc\n\ngo 1.22\n", "calc.go": calcFiles(false)["calc.go"],
		".github/agent.yml": cheapConfig,
	})
	// Built from parts so that secret scanners do not flag this file.
	key := "AKIA" + "Z7QX3MPL4VNR2KDW"
	secret := "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCYzq9w3Lk"
	content := "package calc\\n\\nconst awsKeyID = \\\"" + key + "\\\"\\nconst awsSecret = \\\"" + secret + "\\\"\\n"
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Configure the uploader"},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("write_file", `{"path":"aws.go","content":"`+content+`"}`),
			call("finish", `{"summary":"Added the credentials."}`),
		},
	}.run(t)
	if res.Outcome != verify.Failed || res.HeadCommit != "" || res.Branch != "" {
		t.Fatalf("outcome %s, branch %q, head %q: want failed with nothing committed", res.Outcome, res.Branch, res.HeadCommit)
	}
	if !strings.Contains(res.Reason, "aws.go") || !strings.Contains(res.Reason, "aws-access-token at aws.go") {
		t.Errorf("reason %q does not name the file and rule", res.Reason)
	}
	if b := agentBranches(t, repo); len(b) != 0 {
		t.Errorf("branches created: %v", b)
	}
	for _, name := range []string{FileResult, FileBody, FileLedger} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if name != FileLedger && (strings.Contains(string(data), key) || strings.Contains(string(data), secret)) {
			t.Errorf("%s contains the secret", name)
		}
	}
	if !strings.Contains(readBody(t, out), "aws.go") {
		t.Error("pr.md does not say which file holds the secret")
	}
}

// TestPipelineStoppedAtStepCap: a model that never finishes is stopped at
// the step cap; its change is reported, verified as far as the checks go,
// and not committed.
func TestPipelineStoppedAtStepCap(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	delete(files, "calc_test.go")
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:     repo,
		issue:    agent.Issue{Title: "Add is wrong"},
		wire:     provider.NameAnthropic,
		maxSteps: 2,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
		},
	}.run(t)
	if res.Outcome != verify.Stopped || !strings.Contains(res.Reason, "step limit of 2") {
		t.Fatalf("outcome %s (%s), want stopped at the step limit", res.Outcome, res.Reason)
	}
	if res.HeadCommit != "" || len(agentBranches(t, repo)) != 0 {
		t.Errorf("a stopped run was committed: %q %v", res.HeadCommit, agentBranches(t, repo))
	}
	if !slices.Equal(res.FilesChanged, []string{"calc.go"}) {
		t.Errorf("files_changed %v, want [calc.go]", res.FilesChanged)
	}
	m := readResult(t, out)
	nv, _ := json.Marshal(m["not_verified"])
	if !strings.Contains(string(nv), "not committed") {
		t.Errorf("not_verified %s does not say the change was not committed", nv)
	}
	if !slices.ContainsFunc(res.Checks, func(c CheckSummary) bool { return c.Phase == verify.Final && c.Ran }) {
		t.Errorf("no final check ran after the stop: %+v", res.Checks)
	}
}

// TestPipelineNoChange: the model looks and finishes without editing.
func TestPipelineNoChange(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Is Add right?"},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("search", `{"pattern":"func Add"}`),
			call("finish", `{"summary":"Add is correct; nothing to change."}`),
		},
	}.run(t)
	if res.Outcome != verify.NoChange || res.Branch != "" || res.HeadCommit != "" {
		t.Fatalf("outcome %s branch %q: want no_change without a branch", res.Outcome, res.Branch)
	}
	if b := agentBranches(t, repo); len(b) != 0 {
		t.Errorf("branches created: %v", b)
	}
	if res.Steps != 2 {
		t.Errorf("steps %d, want 2", res.Steps)
	}
	if !strings.Contains(readBody(t, out), "No file was changed.") {
		t.Error("pr.md does not say that nothing changed")
	}
}

// TestPipelineBadConfig: an unknown key in .github/agent.yml is a
// configuration error naming the key, before any container or file.
func TestPipelineBadConfig(t *testing.T) {
	repo := gitRepo(t, map[string]string{"go.mod": "module m\n", ".github/agent.yml": "verify: []\ncolour: blue\n"})
	out := filepath.Join(t.TempDir(), "out")
	e := &Executor{Sandboxes: refusingRunner{t}, Provider: nopProvider{}}
	res, err := e.Execute(context.Background(), Job{ID: "bad-config", RepoURL: repo, Issue: agent.Issue{Title: "x"}, OutDir: out, Publisher: LocalPublisher{}})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `unknown key "colour"`) || res != nil {
		t.Fatalf("Execute = %v, %v; want a configuration error naming colour", res, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output directory was created for a configuration error")
	}
}

// TestPipelineMissingImage: an image the engine lacks is a configuration
// error that names it.
func TestPipelineMissingImage(t *testing.T) {
	repo := gitRepo(t, map[string]string{"go.mod": "module m\n", ".github/agent.yml": "image: nosuch/image:1\n"})
	e := &Executor{Sandboxes: refusingRunner{t}, Provider: nopProvider{}, Images: noImages{}}
	_, err := e.Execute(context.Background(), Job{ID: "no-image", RepoURL: repo, Issue: agent.Issue{Title: "x"}, OutDir: t.TempDir(), Publisher: LocalPublisher{}})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `sandbox image "nosuch/image:1" is not on the Docker engine`) {
		t.Fatalf("err = %v, want a configuration error naming the image", err)
	}
}

type refusingRunner struct{ t *testing.T }

func (r refusingRunner) Create(context.Context, sandbox.Spec) (sandbox.Sandbox, error) {
	r.t.Error("a sandbox was created")
	return nil, errors.New("refused")
}

type nopProvider struct{}

func (nopProvider) Model() string { return "openai:none" }
func (nopProvider) Complete(context.Context, provider.Request) (*provider.Response, error) {
	return nil, errors.New("not called")
}

type noImages struct{}

// ResolveImage answers as the Docker engine does for an image it lacks
// and may not pull.
func (noImages) ResolveImage(_ context.Context, ref string) (sandbox.Image, error) {
	return sandbox.Image{}, fmt.Errorf("image %q is not on the Docker engine and is not pulled: %w", ref, sandbox.ErrImageUnavailable)
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Add returns the difference!":  "add-returns-the-difference",
		"  --Fix   the   BUG--  ":      "fix-the-bug",
		"Crème brûlée":                 "creme-brulee",
		"Straße, Ærø":                  "stra-e-r",
		"日本":                           "issue",
		"":                             "issue",
		strings.Repeat("word ", 20):    "word-word-word-word-word-word-word-word-word-word",
		"fix ../../etc/passwd @{HEAD}": "fix-etc-passwd-head",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUniqueBranch(t *testing.T) {
	m := map[string]plumbing.Hash{"agent/fix": {}, "agent/fix-2": {}, "agent/x/y": {}}
	if got := uniqueBranch("agent/fix", m); got != "agent/fix-3" {
		t.Errorf("got %q, want agent/fix-3", got)
	}
	if got := uniqueBranch("agent/x", m); got != "agent/x-2" {
		t.Errorf("got %q, want agent/x-2 (agent/x/y exists)", got)
	}
	if got := uniqueBranch("agent/new", m); got != "agent/new" {
		t.Errorf("got %q, want agent/new", got)
	}
}

func TestParseIssue(t *testing.T) {
	issue, err := ParseIssue("\n# Add is wrong \r\n\r\nAdd(2, 3) returns -1.\n\n")
	if err != nil || issue.Title != "Add is wrong" || issue.Body != "Add(2, 3) returns -1." {
		t.Errorf("ParseIssue = %+v, %v", issue, err)
	}
	for _, bad := range []string{"", "Add is wrong\nbody", "#\n", "## \n", "#NoSpace"} {
		if _, err := ParseIssue(bad); err == nil {
			t.Errorf("ParseIssue(%q) succeeded", bad)
		}
	}
}

// TestPipelineCancel: a cancel (Ctrl-C) during the loop stops the run:
// outcome stopped, nothing committed, the container removed.
func TestPipelineCancel(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	delete(files, "calc_test.go")
	repo := gitRepo(t, files)
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	srv := pt.New(t,
		call("read_file", `{"path":"calc.go"}`),
		call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
	)
	p, err := provider.New("openai:"+pt.OpenAIModel, srv.Options(provider.NameOpenAI))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := &Executor{
		Sandboxes: engine, Provider: p, Image: image,
	}
	jobID := "test-cancel"
	out := t.TempDir()
	res, err := e.Execute(ctx, Job{ID: jobID, RepoURL: repo, Issue: agent.Issue{Title: "Add is wrong"}, OutDir: out,
		Publisher: LocalPublisher{},
		// The edit's tool call is the moment a person presses Ctrl-C.
		Progress: func(pr Progress) {
			if pr.Tool == "edit" {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if res.Outcome != verify.Stopped || !strings.Contains(res.Reason, "cancelled") {
		t.Fatalf("outcome %s (%s), want stopped by the cancel", res.Outcome, res.Reason)
	}
	if res.HeadCommit != "" || len(agentBranches(t, repo)) != 0 {
		t.Errorf("a cancelled run was committed")
	}
	if !slices.Equal(res.FilesChanged, []string{"calc.go"}) {
		t.Errorf("files_changed %v, want the edit reported", res.FilesChanged)
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", docker.LabelJob+"="+jobID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("%d containers of the cancelled job remain", len(list))
	}
}
