package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCheckCopiesKeepHoles: 30 sparse files of 100 MiB (issue 23) copied
// for the baseline checks take no disk for their holes: the host's free
// disk shrinks by less than 64 MiB, not 3 GiB, and each copy reads as
// the original's size.
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
	free := func() int64 {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		return int64(st.Bavail) * int64(st.Bsize)
	}
	before := free()
	dst := filepath.Join(dir, "check-baseline")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	shrunk := before - free()
	t.Logf("free disk shrank by %d MiB copying 3000 MiB of sparse files", shrunk>>20)
	if shrunk > 64<<20 {
		t.Errorf("free disk shrank by %d MiB, want under 64 MiB", shrunk>>20)
	}
	info, err := os.Stat(filepath.Join(dst, "hole29"))
	if err != nil || info.Size() != maxCopyBytes {
		t.Fatalf("copy: %v, size %v, want %d", err, info, maxCopyBytes)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Blocks*512 > 1<<20 {
		t.Errorf("a copied hole takes %d bytes of disk", st.Blocks*512)
	}
}
