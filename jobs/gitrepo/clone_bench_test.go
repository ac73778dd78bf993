package gitrepo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigRepo makes a repository with 3,000 files over 1,000 commits, fast,
// through git fast-import, once per test binary.
var bigRepoDir string

func bigRepo(b *testing.B) string {
	b.Helper()
	if bigRepoDir != "" {
		return bigRepoDir
	}
	dir, err := os.MkdirTemp("", "patchwright-bigrepo-")
	if err != nil {
		b.Fatal(err)
	}
	gitB(b, dir, "init", "-q", "-b", "main")
	var in strings.Builder
	for c := 0; c < 1000; c++ {
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter T <t@example.com> %d +0000\ndata 8\ncommit %d\n", 1700000000+c, c%10)
		files := 3
		if c == 0 {
			files = 3000
		}
		for f := 0; f < files; f++ {
			n := f
			if c > 0 {
				n = (c*7 + f) % 3000
			}
			body := fmt.Sprintf("package p%d\n\n// revision %d\nvar V%d = %d\n%s", n%50, c, n, c, strings.Repeat("// filler line of text\n", 40))
			fmt.Fprintf(&in, "M 100644 inline pkg%02d/file%04d.go\ndata %d\n%s\n", n%50, n, len(body), body)
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("fast-import: %v\n%s", err, out)
	}
	gitB(b, dir, "checkout", "-q", "main")
	bigRepoDir = dir
	return dir
}

// BenchmarkClone is a depth-1 clone of a 3,000-file repository with 1,000
// commits: go-git as Clone does it, against the git CLI in the same run,
// and Clone with the full history.
//
//	go test -run '^$' -bench BenchmarkClone -benchtime 5x -count 3 ./jobs/gitrepo/
func BenchmarkClone(b *testing.B) {
	src := "file://" + bigRepo(b)
	b.Run("gitrepo-depth1", func(b *testing.B) { benchClone(b, src, 1) })
	b.Run("gitcli-depth1", func(b *testing.B) {
		for b.Loop() {
			dst := filepath.Join(b.TempDir(), "c")
			if out, err := exec.Command("git", "clone", "-q", "--depth", "1", "--single-branch", "--no-tags", src, dst).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	b.Run("gitrepo-full", func(b *testing.B) { benchClone(b, src, 0) })
}

func benchClone(b *testing.B, src string, depth int) {
	for b.Loop() {
		tmp := b.TempDir()
		if _, err := Clone(context.Background(), CloneOptions{URL: src, Depth: depth,
			Worktree: filepath.Join(tmp, "w"), GitDir: filepath.Join(tmp, "g")}); err != nil {
			b.Fatal(err)
		}
	}
}

func gitB(b *testing.B, dir string, args ...string) {
	b.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchmarkChanges is reading the change of a 3,000-file work tree with
// one edit, every tracked file hashed (as Changes does), against `git
// status`, which trusts the index's stat data, in the same run.
//
//	go test -run '^$' -bench BenchmarkChanges -benchtime 10x -count 3 ./jobs/gitrepo/
func BenchmarkChanges(b *testing.B) {
	tmp := b.TempDir()
	r, err := Clone(context.Background(), CloneOptions{
		URL: "file://" + bigRepo(b), Depth: 1,
		Worktree: filepath.Join(tmp, "work"), GitDir: filepath.Join(tmp, "git"),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Worktree(), "pkg00", "file0000.go"), []byte("package p0\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("gitrepo", func(b *testing.B) {
		for b.Loop() {
			if c, err := r.Changes(); err != nil || len(c) != 1 {
				b.Fatalf("%d changes, %v", len(c), err)
			}
		}
	})
	b.Run("git-status", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "--git-dir", filepath.Join(tmp, "git"), "--work-tree", r.Worktree(), "status", "--porcelain")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
		}
	})
}

// BenchmarkRetryTreeSwap is what a retry with a setup adds to its clone
// (pipeline's retrysetup.go): fetching the default branch's tip at depth
// 1 and two overlays (to it for setup, and back), on the 3,000-file
// repository with an agent branch that changes 20 files, against its
// baseline in the same iteration: the retry's depth-1 clone of the agent
// branch. Reported: clone-ms and swap-ms per iteration.
//
//	go test -run '^$' -bench BenchmarkRetryTreeSwap ./jobs/gitrepo/
func BenchmarkRetryTreeSwap(b *testing.B) {
	src := bigRepo(b)
	if out, _ := exec.Command("git", "-C", src, "rev-parse", "-q", "--verify", "refs/heads/agent").Output(); len(out) == 0 {
		gitB(b, src, "checkout", "-q", "-b", "agent")
		for f := 0; f < 20; f++ {
			p := filepath.Join(src, fmt.Sprintf("pkg%02d", f), fmt.Sprintf("agent%02d.go", f))
			if err := os.WriteFile(p, []byte("package p\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		gitB(b, src, "add", "-A")
		gitB(b, src, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "agent")
		gitB(b, src, "checkout", "-q", "main")
	}
	var clone, swap time.Duration
	n := 0
	for b.Loop() {
		tmp := b.TempDir()
		start := time.Now()
		r, err := Clone(context.Background(), CloneOptions{URL: src, Branch: "agent", Depth: 1,
			Worktree: filepath.Join(tmp, "work"), GitDir: filepath.Join(tmp, "git")})
		if err != nil {
			b.Fatal(err)
		}
		clone += time.Since(start)
		start = time.Now()
		tip, err := r.FetchTip(context.Background(), "main")
		if err != nil {
			b.Fatal(err)
		}
		root, err := os.OpenRoot(r.Worktree())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Overlay(root, r.Base(), tip); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Overlay(root, tip, r.Base()); err != nil {
			b.Fatal(err)
		}
		root.Close()
		swap += time.Since(start)
		n++
	}
	b.ReportMetric(float64(clone.Milliseconds())/float64(n), "clone-ms")
	b.ReportMetric(float64(swap.Milliseconds())/float64(n), "swap-ms")
}
