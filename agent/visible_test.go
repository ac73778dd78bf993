package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/repomap"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestModelSeesTheSameFiles holds the instruction loader and the
// repository map against the one table of hostile trees that
// sandbox.Workspace.Visible and the tools (read_file, search, list_files)
// are held against: each refuses exactly the entries the table marks
// invisible.
func TestModelSeesTheSameFiles(t *testing.T) {
	dir, entries := sandboxtest.HostileTree(t)
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, e := range entries {
		data, why, err := readInstruction(ws, e.Path)
		if err != nil {
			t.Errorf("instruction file %s (%s): %v", e.Path, e.What, err)
			continue
		}
		shown := why == "" && strings.Contains(string(data), sandboxtest.Needle)
		if shown != e.Visible {
			t.Errorf("instruction file %s (%s): shown %v (why %q), visible %v", e.Path, e.What, shown, why, e.Visible)
		}
		if strings.Contains(why, sandboxtest.Needle) {
			t.Errorf("instruction file %s: the note quotes the content: %q", e.Path, why)
		}
	}
	m, err := repomap.Build(context.Background(), ws, repomap.Options{TokenBudget: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var mapped []string
	for line := range strings.Lines(m) {
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "[") {
			mapped = append(mapped, strings.TrimSpace(line))
		}
	}
	want := sandboxtest.VisibleFiles(entries)
	slices.Sort(want)
	if !slices.Equal(mapped, want) {
		t.Errorf("the repository map lists %q\nwant %q\nmap:\n%s", mapped, want, m)
	}
}
