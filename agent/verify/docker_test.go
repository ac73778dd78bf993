package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// cliSandbox is this package's test double at the sandbox.Sandbox seam: a
// real container driven with the docker CLI, so the checks run real Go in
// real Docker. It exists only until sandbox.Docker lands; it has none of
// the production hardening.
type cliSandbox struct{ id string }

func testImage() string {
	if img := os.Getenv("PATCHWRIGHT_TEST_IMAGE"); img != "" {
		return img
	}
	return "patchwright-sandbox-test:latest"
}

// startSandbox starts a container with dir mounted at /workspace and no
// network.
func startSandbox(t *testing.T, dir string) *cliSandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Docker and the sandbox test image; skipped under -short")
	}
	if err := exec.Command("docker", "image", "inspect", testImage()).Run(); err != nil {
		t.Fatalf("sandbox test image %s is missing: build it with bash testdata/sandbox-image/build.sh (or run .ci/run)", testImage())
	}
	// One Go build cache for every container of the run: compiling the
	// standard library afresh in each would take minutes on a small CI
	// machine. It lives in the system temp dir so later runs reuse it.
	cache := filepath.Join(os.TempDir(), "patchwright-verify-test-gocache")
	if err := os.MkdirAll(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("docker", "run", "-d", "--rm", "--network", "none",
		"--label", "org.patchwright.test=agent-verify",
		"-v", dir+":"+sandbox.WorkspaceDir, "-w", sandbox.WorkspaceDir,
		"-v", cache+":/tmp/gocache",
		"-e", "HOME=/tmp", "-e", "GOCACHE=/tmp/gocache", "-e", "GOPATH=/tmp/gopath", "-e", "GOFLAGS=-buildvcs=false",
		testImage(), "sleep", "3600").CombinedOutput()
	if err != nil {
		t.Fatalf("start container: %v: %s", err, out)
	}
	sb := &cliSandbox{id: strings.TrimSpace(string(out))}
	t.Cleanup(func() { sb.Close() })
	return sb
}

func (s *cliSandbox) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	secs := int(cmd.Timeout.Seconds())
	if secs <= 0 {
		secs = int(sandbox.DefaultTimeout.Seconds())
	}
	c := exec.CommandContext(ctx, "docker", "exec", s.id, "timeout", "-s", "KILL", fmt.Sprint(secs), "/bin/sh", "-c", cmd.Script)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	res := sandbox.Result{Duration: time.Since(start), Stdout: output(stdout.Bytes()), Stderr: output(stderr.Bytes())}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		res.ExitCode = exit.ExitCode()
		res.TimedOut = res.ExitCode == 137
	default:
		return sandbox.Result{}, fmt.Errorf("docker exec: %w: %s", err, stderr.Bytes())
	}
	return res, nil
}

func output(b []byte) sandbox.Output {
	sum := sha256.Sum256(b)
	return sandbox.Output{Head: b, Total: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
}

func (s *cliSandbox) DisableNetwork(context.Context) error { return nil }
func (s *cliSandbox) ID() string                           { return s.id }
func (s *cliSandbox) Close() error {
	return exec.Command("docker", "rm", "-f", s.id).Run()
}

// fixture is a small git repository created for one test.
type fixture struct {
	t    *testing.T
	dir  string
	base string // the commit the change starts from
}

func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	f.write(files)
	f.git("init", "-q")
	f.git("add", "-A")
	f.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
	f.base = strings.TrimSpace(f.git("rev-parse", "HEAD"))
	// The container's user may differ from ours.
	if err := os.Chmod(f.dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) write(files map[string]string) {
	f.t.Helper()
	for name, content := range files {
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", f.dir}, args...)...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (f *fixture) workspace() *sandbox.Workspace {
	f.t.Helper()
	ws, err := sandbox.OpenWorkspace(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ws.Close() })
	return ws
}

// runner detects the checks and returns a runner over a fresh sandbox,
// with every result recorded.
func (f *fixture) runner(rec *memRecorder) *Runner {
	f.t.Helper()
	d, err := Detect(f.workspace(), DetectOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return &Runner{Sandbox: startSandbox(f.t, f.dir), Checks: d.Checks, Recorder: rec, Timeout: 5 * time.Minute}
}

type memRecorder struct{ results []CheckResult }

func (m *memRecorder) RecordCheck(_ context.Context, r CheckResult) error {
	m.results = append(m.results, r)
	return nil
}

func (f *fixture) run(r *Runner, phase Phase) []CheckResult {
	f.t.Helper()
	res, err := r.Run(context.Background(), phase)
	if err != nil {
		f.t.Fatalf("%s run: %v", phase, err)
	}
	return res
}

func byName(rs []CheckResult, name string) CheckResult {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return CheckResult{}
}

const gomod = "module example.com/calc\n\ngo 1.22\n"

const calcGood = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"

const calcBuggy = "package calc\n\nfunc Add(a, b int) int { return a - b }\n\nfunc Sub(a, b int) int { return a + b }\n"

const addTest = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"

func TestDockerPreexistingFailure(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": gomod, "calc.go": calcBuggy, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	bt := byName(baseline, "test")
	if !bt.Ran || bt.Passed || bt.Flaky || bt.Runs != 3 || bt.Failures != 3 {
		t.Fatalf("baseline test = %+v, want a failure on all 3 runs", bt)
	}
	if got := bt.Tests.FailedTestNames(); len(got) != 1 || got[0] != "TestAdd" {
		t.Errorf("failing tests = %v, want [TestAdd]", got)
	}
	if !strings.Contains(bt.RerunCommand, "-run '^(TestAdd)$' example.com/calc") {
		t.Errorf("rerun command %q does not target TestAdd", bt.RerunCommand)
	}
	f.write(map[string]string{"README.md": "docs only\n"})
	final := f.run(r, Final)
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Unverified || !strings.Contains(reason, "already failing") {
		t.Errorf("outcome = %s (%s), want unverified because already failing", got, reason)
	}
}

func TestDockerBuildBreak(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": gomod, "calc.go": calcGood, "calc_test.go": addTest})
	rec := &memRecorder{}
	r := f.runner(rec)
	baseline := f.run(r, Baseline)
	for _, c := range baseline {
		if !c.Passed {
			t.Fatalf("baseline %s failed: %s", c.Name, c.Output)
		}
	}
	f.write(map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + }\n"})
	final := f.run(r, Final)
	if b := byName(final, "build"); b.Passed || !strings.Contains(b.Output, "calc.go:3") {
		t.Errorf("final build = %+v, want a failure naming calc.go:3", b)
	}
	for _, name := range []string{"vet", "test"} {
		if c := byName(final, name); c.Ran || c.NotRunReason != "build failed" {
			t.Errorf("final %s = %+v, want not run because build failed", name, c)
		}
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Failed || !strings.Contains(reason, "build") {
		t.Errorf("outcome = %s (%s), want failed on build", got, reason)
	}
	if len(rec.results) != 6 {
		t.Errorf("recorded %d results, want 6 (3 checks × 2 phases)", len(rec.results))
	}
}

func TestDockerFixVerified(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": gomod, "calc.go": calcBuggy, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	baseline := f.run(r, Baseline)
	if byName(baseline, "test").Passed {
		t.Fatal("baseline test passed on buggy code")
	}
	f.write(map[string]string{"calc.go": calcGood})
	final := f.run(r, Final)
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: baseline, Final: final})
	if got != Verified {
		t.Errorf("outcome = %s (%s), want verified; final: %+v", got, reason, final)
	}
	if ft := byName(final, "test"); ft.Tests == nil || len(ft.Tests.PackagesOK) != 1 {
		t.Errorf("final test summary = %+v, want one ok package", ft.Tests)
	}
}

// flakyTest fails on every other run, counting runs in a file under /tmp,
// which lives as long as the container.
const flakyTest = `package calc

import (
	"os"
	"strconv"
	"testing"
)

func TestFlaky(t *testing.T) {
	const counter = "/tmp/flaky-counter"
	data, _ := os.ReadFile(counter)
	n, _ := strconv.Atoi(string(data))
	if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o666); err != nil {
		t.Fatal(err)
	}
	if n%2 == 0 {
		t.Fatalf("run %d fails", n)
	}
}
`

func TestDockerFlaky(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": gomod, "calc.go": calcGood, "calc_test.go": addTest})
	r := f.runner(&memRecorder{})
	f.write(map[string]string{"flaky_test.go": flakyTest})
	final := f.run(r, Final)
	ft := byName(final, "test")
	if ft.Passed || !ft.Flaky || ft.Runs != 3 || ft.Failures != 2 {
		t.Fatalf("final test = %+v, want flaky with 2 of 3 runs failed", ft)
	}
	if ft.RunsText() != "2 of 3 runs failed" {
		t.Errorf("RunsText = %q", ft.RunsText())
	}
	if !strings.Contains(ft.RerunCommand, "'^(TestFlaky)$'") {
		t.Errorf("rerun %q is not limited to TestFlaky", ft.RerunCommand)
	}
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Baseline: []CheckResult{pass("build", Baseline), pass("vet", Baseline), pass("test", Baseline)}, Final: final})
	if got != Unverified || !strings.Contains(reason, "flaky") {
		t.Errorf("outcome = %s (%s), want unverified because flaky", got, reason)
	}
}

func TestDockerNewTests(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": gomod, "calc.go": calcBuggy, "calc_test.go": addTest})
	ws := f.workspace()
	r := f.runner(&memRecorder{})
	// The change fixes Sub and adds two tests: TestSub fails on the old
	// code, TestAddZero passes on it too. TestAdd is unchanged.
	newTests := addTest + `
func TestSub(t *testing.T) {
	if got := Sub(5, 3); got != 2 {
		t.Fatalf("Sub(5, 3) = %d, want 2", got)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatal(got)
	}
}
`
	f.write(map[string]string{"calc.go": calcGood, "calc_test.go": newTests})
	changed := []string{"calc.go", "calc_test.go"}
	base, err := OpenBase(f.dir, f.base)
	if err != nil {
		t.Fatal(err)
	}
	found, err := FindNewGoTests(ws, base, changed)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[0].Name != "TestAddZero" || found[1].Name != "TestSub" || !found[0].Added {
		t.Fatalf("new tests = %+v, want TestAddZero and TestSub, added", found)
	}
	results, err := r.RunNewTestsOnBase(context.Background(), ws, base, found, changed)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]NewTestStatus{}
	for _, res := range results {
		status[res.Name] = res.Status
	}
	if status["TestSub"] != FailsBefore || status["TestAddZero"] != PassesBefore {
		t.Errorf("statuses = %v, want TestSub fails_before and TestAddZero passes_before; output:\n%s", status, results[0].Output)
	}
	if _, err := os.Stat(filepath.Join(f.dir, baseDir)); !os.IsNotExist(err) {
		t.Errorf("the original tree was left in the workspace: %v", err)
	}
	if out := f.git("status", "--porcelain"); strings.Contains(out, "patchwright") {
		t.Errorf("git status shows the original tree: %s", out)
	}
}

func TestDockerNoChecks(t *testing.T) {
	f := newFixture(t, map[string]string{"README.md": "just words\n"})
	d, err := Detect(f.workspace(), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Sandbox: startSandbox(t, f.dir), Checks: d.Checks}
	final := f.run(r, Final)
	got, reason := Decide(OutcomeInput{FilesChanged: 1, Final: final})
	if got != Unverified || !strings.Contains(reason, "no verification check") {
		t.Errorf("outcome = %s (%s), want unverified with no check", got, reason)
	}
	if len(d.Missing) == 0 || !strings.Contains(d.Missing[0], "No build or test command") {
		t.Errorf("Missing = %q", d.Missing)
	}
}
