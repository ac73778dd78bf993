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
// writes: 400 MiB, over the default change bound (256 MiB) and over six
// times the growth allowed, so a change held in memory whole would fail.
// It was 150 (1.5 GiB); hashing and compressing that under the race
// detector took minutes and proved nothing more.
const streamFiles = 40

// TestStreamedChangePeak: streamFiles sparse files of 10 MiB (400 MiB
// read) grow the worker's peak resident memory by far less than the
// change, whether the change's bound refuses it (change_too_large) or
// admits it whole and it is committed.
func TestStreamedChangePeak(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 400 MiB of holes")
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
