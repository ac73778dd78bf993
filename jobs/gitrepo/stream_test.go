package gitrepo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// sparseFiles is issue 23's reproduction: files that cost the sandbox
// nothing (holes) and read as n × size bytes of zeros.
func sparseFiles(t testing.TB, dir string, n int, size int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("sparse%03d.bin", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// peakGrowthEnv runs TestStreamedChangePeak's measured part in a child
// process, so its peak resident memory (VmHWM) is that part's alone.
const peakGrowthEnv = "PATCHWRIGHT_TEST_STREAM_PEAK"

// streamFiles is how many sparse files of MaxFileBytes the peak test
// writes: 260 MiB, just over the default change bound (256 MiB), so the
// bound reads 250 MiB of it before it refuses, and four times the growth
// allowed, so a change held in memory whole would fail. It was 150 (1.5
// GiB), then 40 (400 MiB); compressing the blobs under the race detector
// was nearly all of the test's time and proved nothing more (issue 22).
const streamFiles = 26

// TestStreamedChangePeak: streamFiles sparse files of 10 MiB (260 MiB
// read) grow the worker's peak resident memory by far less than the
// change, whether the change's bound refuses it (change_too_large) or
// admits it whole and it is committed.
func TestStreamedChangePeak(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 260 MiB of holes")
	}
	if streamFiles*MaxFileBytes <= DefaultMaxChangeBytes {
		t.Fatalf("%d files of %d MiB are not over the default bound", streamFiles, MaxFileBytes>>20)
	}
	const bound = 64 << 20
	for _, tc := range []struct {
		name     string
		maxBytes int64
	}{
		{"default bound refuses it", 0},
		{"a 2 GiB bound commits it", 2 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStreamPeakChild$", "-test.v")
			cmd.Env = append(os.Environ(), peakGrowthEnv+"="+strconv.FormatInt(tc.maxBytes, 10))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var before, after int64
			var outcome string
			for _, line := range strings.Split(string(out), "\n") {
				fmt.Sscanf(line, "peak %d %d %s", &before, &after, &outcome)
			}
			if after == 0 {
				t.Fatalf("child printed no figures:\n%s", out)
			}
			t.Logf("VmHWM %d MiB before, %d MiB after Changes on %d MiB of sparse files (%s)", before>>20, after>>20, streamFiles*MaxFileBytes>>20, outcome)
			want := "change_too_large"
			if tc.maxBytes > 0 {
				want = "committed"
			}
			if outcome != want {
				t.Errorf("outcome %s, want %s", outcome, want)
			}
			if after-before > bound {
				t.Errorf("peak resident memory grew by %d MiB, want under %d MiB", (after-before)>>20, bound>>20)
			}
		})
	}
}

// TestStreamPeakChild is the measured part of TestStreamedChangePeak.
func TestStreamPeakChild(t *testing.T) {
	env := os.Getenv(peakGrowthEnv)
	if env == "" {
		t.Skip("run by TestStreamedChangePeak")
	}
	maxBytes, err := strconv.ParseInt(env, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	r := clone(t, origin(t))
	sparseFiles(t, filepath.Join(r.Worktree(), "holes"), streamFiles, MaxFileBytes)
	before := vmHWM(t)
	changes, err := r.ChangesWithin(Limits{MaxBytes: maxBytes})
	outcome := "committed"
	var limit *LimitError
	switch {
	case errors.As(err, &limit):
		outcome = "change_too_large"
	case err != nil:
		t.Fatal(err)
	default:
		if len(changes) != streamFiles {
			t.Fatalf("%d changes, want %d", len(changes), streamFiles)
		}
		if _, err := r.Commit(changes, CommitOptions{Branch: "agent/holes", Message: "holes", Author: Signature{Name: "b", Email: "b@x"}}); err != nil {
			t.Fatal(err)
		}
		rd, err := r.Open(changes[streamFiles-1])
		if err != nil {
			t.Fatal(err)
		}
		n, err := bufio.NewReader(rd).Discard(MaxFileBytes + 1)
		rd.Close()
		if n != MaxFileBytes {
			t.Fatalf("the last blob streams %d bytes (%v), want %d", n, err, MaxFileBytes)
		}
	}
	fmt.Printf("peak %d %d %s\n", before, vmHWM(t), outcome)
}

// vmHWM is this process's peak resident memory in bytes: getrusage's
// maxrss (KiB on Linux), the figure /proc/self/status calls VmHWM.
func vmHWM(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Maxrss << 10
}

// TestChangedBlobIsGitsLooseObject: the blob Changes writes as it reads
// a file is a loose object git reads back and names alike, compressed at
// git's level for loose objects (zlib's best speed: header 78 01).
func TestChangedBlobIsGitsLooseObject(t *testing.T) {
	r := clone(t, origin(t))
	content := strings.Repeat("streamed line\n", 1000)
	write(t, filepath.Join(r.Worktree(), "new.txt"), content)
	changes, err := r.Changes()
	if err != nil || len(changes) != 1 {
		t.Fatalf("changes %+v, %v", changes, err)
	}
	h := changes[0].blob.String()
	if got := runGit(t, r.Worktree(), "hash-object", "new.txt"); got != h {
		t.Errorf("blob %s, git hash-object %s", h, got)
	}
	cmd := exec.Command("git", "--git-dir", r.GitDir(), "cat-file", "blob", h)
	if out, err := cmd.Output(); err != nil || string(out) != content {
		t.Errorf("git cat-file blob %s: %d bytes, %v; want the file's %d", h, len(out), err, len(content))
	}
	obj, err := os.ReadFile(filepath.Join(r.GitDir(), "objects", h[:2], h[2:]))
	if err != nil {
		t.Fatal(err)
	}
	if len(obj) < 2 || obj[0] != 0x78 || obj[1] != 0x01 {
		t.Errorf("loose object starts % x, want 78 01 (zlib, best speed)", obj[:min(2, len(obj))])
	}
	if st, err := os.Stat(filepath.Join(r.GitDir(), "objects", h[:2], h[2:])); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o444 {
		t.Errorf("loose object mode %v, want read only", st.Mode())
	}
	if tmp, _ := filepath.Glob(filepath.Join(r.GitDir(), "objects", "tmp_obj_*")); len(tmp) > 0 {
		t.Errorf("temporary objects left: %v", tmp)
	}
}
