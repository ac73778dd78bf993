package gitrepo

import (
	"context"
	"path/filepath"
	"testing"
)

// The first template path found wins, names and folders match without
// regard to case, a folder of templates gives its first .md by name, and
// the branch asked for is read, not the clone's.
func TestFirstFile(t *testing.T) {
	patterns := []string{".github/pull_request_template.md", ".github/PULL_REQUEST_TEMPLATE/*.md", "docs/pull_request_template.md", "pull_request_template.md"}
	dir := origin(t)
	ctx := context.Background()
	if p, data, err := ReadBranchFirst(ctx, CloneOptions{URL: dir}, "main", patterns); p != "" || data != nil || err != nil {
		t.Fatalf("no template: %q %q %v", p, data, err)
	}
	write(t, filepath.Join(dir, "PULL_REQUEST_TEMPLATE.md"), "root\n")
	write(t, filepath.Join(dir, "docs", "pull_request_template.md"), "docs\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-qm", "templates")
	if p, data, err := ReadBranchFirst(ctx, CloneOptions{URL: dir}, "main", patterns); p != "docs/pull_request_template.md" || string(data) != "docs\n" || err != nil {
		t.Fatalf("docs before root: %q %q %v", p, data, err)
	}
	write(t, filepath.Join(dir, ".github", "pull_request_template", "zz.md"), "zz\n")
	write(t, filepath.Join(dir, ".github", "pull_request_template", "bug.md"), "bug\n")
	write(t, filepath.Join(dir, ".github", "pull_request_template", "notes.txt"), "not markdown\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-qm", "folder")
	r := clone(t, dir)
	if p, data, err := r.BaseFirst(patterns); p != ".github/pull_request_template/bug.md" || string(data) != "bug\n" || err != nil {
		t.Fatalf("folder: %q %q %v", p, data, err)
	}
	runGit(t, dir, "checkout", "-q", "-b", "agent/issue-1")
	write(t, filepath.Join(dir, ".github", "Pull_Request_Template.md"), "forged on the agent branch\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-qm", "attempt")
	runGit(t, dir, "checkout", "-q", "main")
	if p, _, err := ReadBranchFirst(ctx, CloneOptions{URL: dir}, "main", patterns); p != ".github/pull_request_template/bug.md" || err != nil {
		t.Fatalf("main: %q %v", p, err)
	}
	if p, data, err := ReadBranchFirst(ctx, CloneOptions{URL: dir}, "agent/issue-1", patterns); p != ".github/Pull_Request_Template.md" || string(data) != "forged on the agent branch\n" || err != nil {
		t.Fatalf("agent branch (case-insensitive name): %q %q %v", p, data, err)
	}
}
