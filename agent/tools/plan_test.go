package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

// The planning set offers only the tools that read, and needs neither a
// sandbox nor a verifier: nothing in it can run a command.
func TestReadOnlySetHasNoWriteOrRunTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := New(Options{Workspace: ws, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name())
	}
	if want := []string{"list_files", "read_file", "search", "submit_plan"}; !slices.Equal(names, want) {
		t.Fatalf("read-only tools %v, want %v", names, want)
	}
	for _, w := range []string{"edit", "write_file", "delete_file", "run", "verify", "fetch_dependencies", "finish"} {
		if _, ok := set.Lookup(w); ok {
			t.Errorf("read-only set has %s", w)
		}
	}
	// Without ReadOnly the sandbox is still required.
	if _, err := New(Options{Workspace: ws}); err == nil {
		t.Error("a full set without a sandbox was built")
	}
}

func TestSubmitPlan(t *testing.T) {
	env := newEnv(t, map[string]string{"a.txt": "x\n"}, func(o *Options) { o.ReadOnly = true })
	res := env.call(t, "submit_plan", `{"files":["a.txt"," "],"approach":"Fix it.","verification":"go test ./...","risks":"None seen."}`)
	if res.Code != "" || res.Finish == nil {
		t.Fatalf("submit_plan: %+v", res)
	}
	for _, want := range []string{PlanFiles + ":\n- a.txt\n", PlanApproach + ":\nFix it.", PlanVerification + ":\ngo test ./...", PlanRisks + ":\nNone seen."} {
		if !strings.Contains(res.Finish.Summary, want) {
			t.Errorf("plan lacks %q:\n%s", want, res.Finish.Summary)
		}
	}
	if strings.Contains(res.Finish.Summary, "- \n") {
		t.Errorf("blank file entry kept:\n%s", res.Finish.Summary)
	}
	bad := env.call(t, "submit_plan", `{"files":[],"approach":"x","verification":"","risks":"r"}`)
	if bad.Code != InvalidArguments || bad.Finish != nil || !strings.Contains(bad.Text, "files, verification") {
		t.Errorf("incomplete plan: %+v", bad)
	}
}
