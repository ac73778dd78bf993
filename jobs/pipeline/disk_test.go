package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
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

// TestBoundedWorkspace: with BoundWorkspace, a command that writes past
// the limit fails with no space left, the run goes on, and the big file
// is not part of the change.
func TestBoundedWorkspace(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	s := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"dd if=/dev/zero of=big bs=1M count=200"}`),
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Fixed Add."}`),
		},
		bound: func(ctx context.Context, dir string) (func() error, error) {
			b, err := docker.NewBoundedDir(ctx, dir, dir+".img", 64<<20, sandboxtest.UID, sandboxtest.GID)
			if err != nil {
				return nil, err
			}
			return b.Close, nil
		},
	}
	res, out, _ := s.run(t)
	if !strings.Contains(readLedger(t, out), "No space left on device") {
		t.Errorf("the write past the limit did not fail with ENOSPC")
	}
	if res.HeadCommit == "" || strings.Join(res.FilesChanged, ",") != "calc.go" {
		t.Errorf("files %v head %q: want calc.go committed, the partial big file left out", res.FilesChanged, res.HeadCommit)
	}
}

// fitRunner refuses read-only caches as too large, like the engine does
// for a cache over the sandbox's tmpfs, and records each spec.
type fitRunner struct{ specs []sandbox.Spec }

func (f *fitRunner) Create(_ context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	f.specs = append(f.specs, spec)
	if spec.CacheReadOnly {
		return nil, errors.New("copy the shared cache into sandbox 0123: exit 1: no space (a cache larger than Limits.TmpfsBytes does not fit)")
	}
	return nil, nil
}

// TestCacheTooLargeFallsBack: a cache too large to copy does not stop the
// run; the sandbox writes a copy of its own on disk, seeded from the
// shared cache, which it never writes (trust.go). A writable spec is not
// retried.
func TestCacheTooLargeFallsBack(t *testing.T) {
	for _, tc := range []struct {
		stage     stage
		want      string
		fetchMade bool
	}{
		{stageAgent, "shared-fetch-j", false},
		{stageFinal, "shared-job-j", false},
		{stageRetryBaseline, "shared-job-j", false},
	} {
		f := &fitRunner{}
		r := &run{e: &Executor{Sandboxes: f, CacheVolume: func(string) string { return "shared" }}, job: Job{ID: "j"}}
		if _, err := r.create(context.Background(), tc.stage, "/w"); err != nil {
			t.Fatal(err)
		}
		if len(f.specs) != 2 || !f.specs[0].CacheReadOnly || f.specs[0].CacheVolume != "shared" {
			t.Fatalf("%s: specs %+v: want a first, read-only try of the shared cache", tc.stage, f.specs)
		}
		if s := f.specs[1]; s.CacheReadOnly || s.CacheVolume != tc.want || s.CacheFrom != "shared" {
			t.Errorf("%s: second try %+v: want writable %s, a copy of the shared cache", tc.stage, s, tc.want)
		}
	}
	f := &fitRunner{}
	r := &run{e: &Executor{Sandboxes: f, CacheVolume: func(string) string { return "shared" }}, job: Job{ID: "j"}}
	if _, err := r.create(context.Background(), stageBaseline, "/w"); err != nil || len(f.specs) != 1 {
		t.Fatalf("a writable spec: %v, %d tries", err, len(f.specs))
	}
}

// TestUnboundableWorkspaceRunsAnyway: where no bounded filesystem can be
// made, the job still runs, and the body says the work tree had no limit.
func TestUnboundableWorkspaceRunsAnyway(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("finish", `{"summary":"Fixed Add."}`),
		},
		bound: func(context.Context, string) (func() error, error) {
			return nil, errors.New("losetup: cannot find an unused loop device")
		},
	}.run(t)
	if res.HeadCommit == "" {
		t.Fatalf("nothing committed: %s (%s)", res.Outcome, res.Reason)
	}
	if body := readBody(t, out); !strings.Contains(body, "no size limit") || !strings.Contains(body, "unused loop device") {
		t.Errorf("pr.md does not say the work tree was unbounded:\n%s", body)
	}
}
