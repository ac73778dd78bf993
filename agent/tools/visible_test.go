package tools

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestModelSeesTheSameFiles holds read_file, search and list_files
// against the one table of hostile trees (sandboxtest.HostileTree) that
// sandbox.Workspace.Visible, the instruction files and the repository map
// are held against: each refuses exactly the entries the table marks
// invisible.
func TestModelSeesTheSameFiles(t *testing.T) {
	dir, entries := sandboxtest.HostileTree(t)
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := New(Options{Workspace: ws, Sandbox: &fakeSandbox{}, Verifier: &fakeVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	env := &testEnv{dir: dir, ws: ws, set: set}

	for _, e := range entries {
		res := env.call(t, "read_file", ReadFileParams{Path: e.Path})
		if refused := res.Code != ""; refused == e.Visible {
			t.Errorf("read_file %s (%s): code %q, visible %v:\n%s", e.Path, e.What, res.Code, e.Visible, res.Text)
		}
		if !e.Visible && strings.Contains(res.Text, sandboxtest.Needle) {
			t.Errorf("read_file %s (%s) showed its content:\n%s", e.Path, e.What, res.Text)
		}
		for _, tool := range []string{"list_files", "search"} {
			args := any(ListFilesParams{Path: e.Path})
			if tool == "search" {
				args = SearchParams{Pattern: sandboxtest.Needle, Path: e.Path}
			}
			res := env.call(t, tool, args)
			if refused := res.Code != ""; refused == e.Visible {
				t.Errorf("%s from %s (%s): code %q, visible %v:\n%s", tool, e.Path, e.What, res.Code, e.Visible, res.Text)
			}
		}
	}

	want := sandboxtest.VisibleFiles(entries)
	slices.Sort(want)
	listed := env.call(t, "list_files", ListFilesParams{})
	wantCode(t, listed, "")
	if got := strings.Fields(listed.Text); !slices.Equal(got, want) {
		t.Errorf("list_files listed %q\nwant %q", got, want)
	}
	found := env.call(t, "search", SearchParams{Pattern: sandboxtest.Needle})
	wantCode(t, found, "")
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^([^\[\s][^:]*):1: `).FindAllStringSubmatch(found.Text, -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("search found %q\nwant %q; result:\n%s", got, want, found.Text)
	}
	// The three hard links to hidden files matched and were left out.
	if !strings.Contains(found.Text, "left out 3 matching files that are hard links") {
		t.Errorf("search does not say it left out the hard links:\n%s", found.Text)
	}
}
