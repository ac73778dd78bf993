package pipeline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCheckCopiesKeepHoles: 30 sparse files of 100 MiB (issue 23) copied
// for the baseline checks take no disk for their holes: the copy takes
// under 64 MiB of disk, not 3 GiB, and each copied file reads as the
// original's size.
func TestCheckCopiesKeepHoles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "work")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		f, err := os.Create(filepath.Join(src, fmt.Sprintf("hole%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(maxCopyBytes); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	dst := filepath.Join(dir, "check-baseline")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	// The copy's own blocks, not the host's free disk, which the other
	// packages' tests running beside this one change.
	used := diskUsed(t, dst)
	t.Logf("the copy of 3000 MiB of sparse files takes %d KiB of disk", used>>10)
	if used > 64<<20 {
		t.Errorf("the copy takes %d MiB of disk, want under 64 MiB", used>>20)
	}
	info, err := os.Stat(filepath.Join(dst, "hole29"))
	if err != nil || info.Size() != maxCopyBytes {
		t.Fatalf("copy: %v, size %v, want %d", err, info, maxCopyBytes)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Blocks*512 > 1<<20 {
		t.Errorf("a copied hole takes %d bytes of disk", st.Blocks*512)
	}
}

// diskUsed is the disk the files under dir take (du, not their sizes).
func diskUsed(t *testing.T, dir string) int64 {
	t.Helper()
	var used int64
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		used += info.Sys().(*syscall.Stat_t).Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}
