package pipeline

import (
	"bytes"
	"errors"
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

// TestCheckCopiesKeepData: what a sparse file holds between and after its
// holes is copied as it is, a written block of zeros becomes a hole too,
// and the copy has the file's length.
func TestCheckCopiesKeepData(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "work")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(src, "mixed"))
	if err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		at   int64
		data []byte
	}{
		{0, []byte("head")},
		{3 << 20, bytes.Repeat([]byte("middle "), 30000)},
		{5 << 20, make([]byte, 1<<20)}, // written zeros
		{9<<20 + 7, []byte("tail, not block-aligned")},
	}
	for _, w := range writes {
		if _, err := f.WriteAt(w.data, w.at); err != nil {
			t.Fatal(err)
		}
	}
	const size = 10 << 20
	if err := errors.Join(f.Truncate(size), f.Close()); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "check-baseline")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(src, "mixed"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "mixed"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != size || !bytes.Equal(got, want) {
		t.Fatalf("the copy has %d bytes and differs: %v, want %d the same as the file", len(got), !bytes.Equal(got, want), size)
	}
	if used := diskUsed(t, dst); used > 1<<20 {
		t.Errorf("the copy takes %d KiB of disk, want under 1 MiB (its data is about 210 KiB)", used>>10)
	}
}
