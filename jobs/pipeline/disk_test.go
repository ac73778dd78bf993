package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
)

// TestDiskFullRefused: a job on a disk with less free space than it needs
// fails before it clones, with ErrDiskFull and the figures.
func TestDiskFullRefused(t *testing.T) {
	e := &Executor{Sandboxes: refusingRunner{t}, Provider: nopProvider{}, WorkDir: t.TempDir(), MinFreeBytes: 1 << 62}
	_, err := e.Execute(context.Background(), Job{ID: "disk", RepoURL: "/nonexistent", Issue: agent.Issue{Title: "x"},
		OutDir: t.TempDir(), Publisher: LocalPublisher{}})
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "MiB free") {
		t.Fatalf("err = %v, want ErrDiskFull with the figures", err)
	}
}

// TestScrubPaths: the work directory never shows in a message, and the
// error still matches what it wraps.
func TestScrubPaths(t *testing.T) {
	dir := "/tmp/patchwright-job-123"
	err := scrubPaths(fmt.Errorf("commit: open %s/work/a.go: %w", dir, os.ErrPermission), dir)
	if strings.Contains(err.Error(), dir) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("scrubbed = %q (is ErrPermission: %v)", err, errors.Is(err, os.ErrPermission))
	}
	plain := errors.New("no paths here")
	if scrubPaths(plain, dir) != plain || scrubPaths(nil, dir) != nil {
		t.Error("an error without the path was changed")
	}
}
