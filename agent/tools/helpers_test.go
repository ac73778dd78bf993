package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

// fakeSandbox is a sandbox.Sandbox at the seam: exec decides what a
// command does. Real-Docker tests live in run_docker_test.go.
type fakeSandbox struct {
	exec func(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error)
	got  []sandbox.Command
}

func (f *fakeSandbox) Exec(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	f.got = append(f.got, cmd)
	if f.exec == nil {
		return sandbox.Result{}, nil
	}
	return f.exec(ctx, cmd)
}
func (f *fakeSandbox) DisableNetwork(context.Context) error { return nil }
func (f *fakeSandbox) ID() string                           { return "fake" }
func (f *fakeSandbox) Close() error                         { return nil }

// fakeVerifier returns fixed checks.
type fakeVerifier struct {
	checks []Check
	err    error
}

func (f *fakeVerifier) Verify(context.Context) ([]Check, error) { return f.checks, f.err }

// writeTree creates files (path → content) under dir; a content starting
// with "->" makes a symlink to the rest.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type testEnv struct {
	dir string
	ws  *sandbox.Workspace
	set *Set
	sb  *fakeSandbox
	ver *fakeVerifier
}

// newEnv opens a workspace over a temporary directory holding files.
func newEnv(t *testing.T, files map[string]string, opts ...func(*Options)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	env := &testEnv{dir: dir, ws: ws, sb: &fakeSandbox{}, ver: &fakeVerifier{}}
	o := Options{Workspace: ws, Sandbox: env.sb, Verifier: env.ver}
	for _, f := range opts {
		f(&o)
	}
	set, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	env.set = set
	return env
}

// call runs a tool by name with arguments given as a Go value or a JSON
// string, failing the test on a Go error.
func (e *testEnv) call(t *testing.T, name string, args any) Result {
	t.Helper()
	res, err := e.callErr(t, name, args)
	if err != nil {
		t.Fatalf("%s: unexpected Go error: %v", name, err)
	}
	return res
}

func (e *testEnv) callErr(t *testing.T, name string, args any) (Result, error) {
	t.Helper()
	tool, ok := e.set.Lookup(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return tool.Call(context.Background(), raw)
}

// read reads a file of the test tree directly (test side, not the tools).
func (e *testEnv) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantCode checks a result's code and the "error: CODE" text contract.
func wantCode(t *testing.T, res Result, code Code) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("code = %q, want %q; text:\n%s", res.Code, code, res.Text)
	}
	if code == "" {
		if strings.HasPrefix(res.Text, "error:") {
			t.Fatalf("successful result reads like an error:\n%s", res.Text)
		}
		return
	}
	lines := strings.SplitN(res.Text, "\n", 3)
	if !strings.HasPrefix(lines[0], "error: "+string(code)) {
		t.Fatalf("text does not start with %q:\n%s", "error: "+code, res.Text)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "hint: ") || len(lines[1]) < 12 {
		t.Fatalf("second line is not a hint:\n%s", res.Text)
	}
}
