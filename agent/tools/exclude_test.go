package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ignore"
)

// Excluded paths (sandbox.Workspace.Exclude) are refused to every file
// tool, reading and writing alike, and left out of every listing and
// search, existing or not; the files stay as they were.
func TestExcludedPathsRefused(t *testing.T) {
	env := newEnv(t, map[string]string{
		"main.go":             "package main\n",
		"data/customers.csv":  "NEEDLE-1\n",
		"docs/private.pii.md": "NEEDLE-2\n",
		"docs/public.md":      "public\n",
	})
	env.ws.Exclude(ignore.NewList([]string{"data/", "*.pii.md"}))
	for _, c := range []struct {
		tool string
		args any
	}{
		{"read_file", ReadFileParams{Path: "data/customers.csv"}},
		{"read_file", ReadFileParams{Path: "docs/private.pii.md"}},
		{"read_file", ReadFileParams{Path: "data/absent.csv"}},
		{"list_files", ListFilesParams{Path: "data"}},
		{"search", SearchParams{Pattern: "NEEDLE", Path: "data"}},
		{"write_file", WriteFileParams{Path: "data/new.csv", Content: "x\n"}},
		{"write_file", WriteFileParams{Path: "docs/other.pii.md", Content: "x\n"}},
		{"edit", EditParams{Edits: []Edit{{Path: "docs/private.pii.md", OldText: "NEEDLE-2", NewText: "y"}}}},
		{"delete_file", DeleteFileParams{Path: "data/customers.csv"}},
	} {
		res := env.call(t, c.tool, c.args)
		if res.Code != PathDenied || !strings.Contains(res.Text, "excluded") || strings.Contains(res.Text, "NEEDLE") {
			t.Errorf("%s %+v: %q %s, want path_denied naming the exclusion", c.tool, c.args, res.Code, res.Text)
		}
	}
	for _, c := range []struct {
		tool string
		args any
	}{
		{"list_files", ListFilesParams{}},
		{"search", SearchParams{Pattern: "NEEDLE|public"}},
		{"search", SearchParams{Pattern: "NEEDLE", Path: "docs"}},
	} {
		res := env.call(t, c.tool, c.args)
		if res.Code != "" || strings.Contains(res.Text, "NEEDLE") || strings.Contains(res.Text, "customers") || strings.Contains(res.Text, "private") {
			t.Errorf("%s %+v shows an excluded path:\n%s", c.tool, c.args, res.Text)
		}
	}
	for _, f := range []string{"data/new.csv", "docs/other.pii.md"} {
		if _, err := os.Stat(filepath.Join(env.dir, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(env.dir, "docs/private.pii.md")); string(b) != "NEEDLE-2\n" {
		t.Errorf("docs/private.pii.md changed to %q", b)
	}
}
