//go:build linux

package sandbox_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// walkHandles walks the tree from h as search does: it lists each
// directory, opens subdirectories from their parent's handle and reads
// each regular file; it returns the files read and, apart, those refused
// as hard links to hidden files.
func walkHandles(t *testing.T, h *sandbox.DirHandle) (read, linked []string) {
	t.Helper()
	defer h.Close()
	var dirs, files []string
	if err := h.List(func(e sandbox.Entry, notVisible error) {
		switch {
		case notVisible != nil:
			if !errors.Is(notVisible, sandbox.ErrPathDenied) {
				t.Errorf("%s: not visible, but %v is no path_denied", e.Name(), notVisible)
			}
		case e.IsDir():
			dirs = append(dirs, e.Name())
		case e.Type().IsRegular():
			files = append(files, e.Name())
		default:
			t.Errorf("%s: type %v listed as visible", e.Name(), e.Type())
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		p := path.Join(h.Path(), name)
		_, err := h.ReadFile(name, nil, 0)
		var nv *sandbox.NotVisibleError
		switch {
		case err == nil:
			read = append(read, p)
		case errors.As(err, &nv) && nv.Why == sandbox.WhyHardLink:
			linked = append(linked, p)
		default:
			t.Errorf("read %s: %v", p, err)
		}
	}
	for _, name := range dirs {
		sub, err := h.Sub(name)
		if err != nil {
			t.Errorf("open %s: %v", name, err)
			continue
		}
		r, l := walkHandles(t, sub)
		read, linked = append(read, r...), append(linked, l...)
	}
	return read, linked
}

// TestDirHandleSeesTheSameFiles holds DirHandle, search's reader, to the
// table of hostile trees every other reader is held to.
func TestDirHandleSeesTheSameFiles(t *testing.T) {
	dir, entries := sandboxtest.HostileTree(t)
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	h, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	read, linked := walkHandles(t, h)
	slices.Sort(read)
	want := sandboxtest.VisibleFiles(entries)
	slices.Sort(want)
	if !slices.Equal(read, want) {
		t.Errorf("DirHandle read %q\nwant %q", read, want)
	}
	if len(linked) != 3 {
		t.Errorf("DirHandle refused %q as hard links to hidden files, want the tree's three", linked)
	}
	for _, e := range entries {
		if e.Visible || strings.Contains(e.Path, "/") {
			continue
		}
		if _, err := ws.OpenDirHandle(e.Path); !errors.Is(err, sandbox.ErrPathDenied) {
			t.Errorf("OpenDirHandle(%q) (%s) = %v, want path denied", e.Path, e.What, err)
		}
	}
}

// escapeTree is a workspace with a directory and a file, and outside it
// a directory holding a file the walk must never reach.
func escapeTree(t *testing.T) (ws *sandbox.Workspace, dir, outside string) {
	t.Helper()
	dir, outside = t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "pkg/a.go", "inside\n")
	write(t, dir, "main.go", "inside\n")
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, dir, outside
}

func wantSymlinkRefused(t *testing.T, what string, err error) {
	t.Helper()
	var nv *sandbox.NotVisibleError
	if !errors.As(err, &nv) || nv.Why != sandbox.WhySymlink {
		t.Errorf("%s: %v, want a refused symlink", what, err)
	}
}

// TestDirHandleSymlinkSwap swaps a directory and a file for symlinks to
// the outside after the listing saw them as a directory and a file: the
// handle must refuse both, never follow them.
func TestDirHandleSymlinkSwap(t *testing.T) {
	ws, dir, outside := escapeTree(t)
	h, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	types := map[string]fs.FileMode{}
	if err := h.List(func(e sandbox.Entry, _ error) { types[e.Name()] = e.Type() }); err != nil {
		t.Fatal(err)
	}
	if !types["pkg"].IsDir() || !types["main.go"].IsRegular() {
		t.Fatalf("listing: %v", types)
	}
	for _, name := range []string{"pkg", "main.go"} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "pkg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(dir, "main.go")); err != nil {
		t.Fatal(err)
	}
	_, err = h.Sub("pkg")
	wantSymlinkRefused(t, "Sub(pkg) swapped for a link", err)
	data, err := h.ReadFile("main.go", nil, 0)
	wantSymlinkRefused(t, "ReadFile(main.go) swapped for a link", err)
	if bytes.Contains(data, []byte("outside")) {
		t.Errorf("read the outside file through a swapped link")
	}
	// The listing now reports both as links, never as what they point to.
	err = h.List(func(e sandbox.Entry, notVisible error) {
		if e.Name() == "pkg" || e.Name() == "main.go" {
			wantSymlinkRefused(t, "List "+e.Name(), notVisible)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDirHandleOpenSubThenSwap opens a subdirectory, then a command
// replaces it with a link to the outside: the open handle still reads
// the directory it opened (now under another name inside the tree), and
// reopening the name is refused.
func TestDirHandleOpenSubThenSwap(t *testing.T) {
	ws, dir, outside := escapeTree(t)
	h, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sub, err := h.Sub("pkg")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := os.Rename(filepath.Join(dir, "pkg"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "pkg")); err != nil {
		t.Fatal(err)
	}
	data, err := sub.ReadFile("a.go", nil, 0)
	if err != nil || string(data) != "inside\n" {
		t.Errorf("ReadFile through the open handle = %q, %v; want the moved directory's file", data, err)
	}
	if _, err := sub.ReadFile("secret.go", nil, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(secret.go) from the moved directory = %v, want not exist", err)
	}
	_, err = h.Sub("pkg")
	wantSymlinkRefused(t, "Sub(pkg) after the swap", err)
}

// TestDirHandleRefusesNames: a handle resolves single entries only, and
// not the ones WalkDir leaves out.
func TestDirHandleRefusesNames(t *testing.T) {
	ws, dir, _ := escapeTree(t)
	write(t, dir, ".env", "TOKEN=x\n")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, ".git/config", "[core]\n")
	h, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, name := range []string{"", ".", "..", "../x", "pkg/a.go", "a\x00b", ".env", "id_rsa"} {
		if _, err := h.ReadFile(name, nil, 0); !errors.Is(err, sandbox.ErrPathDenied) {
			t.Errorf("ReadFile(%q) = %v, want path denied", name, err)
		}
	}
	for _, name := range []string{"..", ".git", "pkg/..", ".env"} {
		if _, err := h.Sub(name); !errors.Is(err, sandbox.ErrPathDenied) {
			t.Errorf("Sub(%q) = %v, want path denied", name, err)
		}
	}
	if _, err := h.Sub("main.go"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Sub(a file) = %v, want ENOTDIR", err)
	}
	if _, err := h.ReadFile("pkg", nil, 0); !errors.Is(err, sandbox.ErrNotRegular) {
		t.Errorf("ReadFile(a directory) = %v, want not regular", err)
	}
	if _, err := h.ReadFile("gone.go", nil, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want not exist", err)
	}
	var names []string
	if err := h.List(func(e sandbox.Entry, _ error) { names = append(names, e.Name()) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"main.go", "pkg"}; !slices.Equal(names, want) {
		t.Errorf("List = %q, want %q (no .git, no secret names)", names, want)
	}
	if _, err := ws.OpenDirHandle("../"); !errors.Is(err, sandbox.ErrPathDenied) {
		t.Errorf("OpenDirHandle(../) = %v, want path denied", err)
	}
	if _, err := ws.OpenDirHandle("main.go"); err == nil {
		t.Errorf("OpenDirHandle(a file) succeeded")
	}
}

// TestDirHandleSpecialFiles: a FIFO and a device are listed as not
// visible, and reading one swapped in after the listing neither hangs
// nor returns its content.
func TestDirHandleSpecialFiles(t *testing.T) {
	ws, dir, _ := escapeTree(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	device := os.Geteuid() == 0
	if device {
		// A copy of /dev/zero, which would never end if read.
		if err := syscall.Mknod(filepath.Join(dir, "zero"), syscall.S_IFCHR|0o644, 1<<8|5); err != nil {
			t.Fatal(err)
		}
	}
	h, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	why := map[string]string{}
	if err := h.List(func(e sandbox.Entry, notVisible error) {
		var nv *sandbox.NotVisibleError
		if errors.As(notVisible, &nv) {
			why[e.Name()] = nv.Why
		}
	}); err != nil {
		t.Fatal(err)
	}
	if why["fifo"] != sandbox.WhyFIFO {
		t.Errorf("fifo listed as %q", why["fifo"])
	}
	if _, err := h.ReadFile("fifo", nil, 0); !errors.Is(err, sandbox.ErrNotRegular) {
		t.Errorf("ReadFile(fifo) = %v, want not regular", err)
	}
	if !device {
		t.Skip("not root: no device file to test")
	}
	if why["zero"] != sandbox.WhyDevice {
		t.Errorf("device listed as %q", why["zero"])
	}
	if _, err := h.ReadFile("zero", nil, 0); !errors.Is(err, sandbox.ErrNotRegular) {
		t.Errorf("ReadFile(device) = %v, want not regular", err)
	}
}

// TestDirHandleLargeFiles: a file over the limit is refused from its
// size, without reading it (a sparse file of 64 GiB), and the limit is
// the smaller of the caller's and the workspace's MaxRead.
func TestDirHandleLargeFiles(t *testing.T) {
	ws, dir, _ := escapeTree(t)
	ws.MaxRead = 1000
	write(t, dir, "edge.txt", strings.Repeat("x", 1000))
	write(t, dir, "over.txt", strings.Repeat("x", 1001))
	if err := os.Truncate(filepath.Join(dir, "main.go"), 64<<30); err != nil {
		t.Fatal(err)
	}
	h, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cases := []struct {
		name  string
		limit int64
		ok    bool
	}{
		{"edge.txt", 0, true},
		{"edge.txt", 1000, true},
		{"edge.txt", 1 << 20, true}, // MaxRead still applies
		{"edge.txt", 999, false},
		{"over.txt", 0, false},
		{"over.txt", 1 << 20, false},
		{"main.go", 0, false},
	}
	for _, c := range cases {
		data, err := h.ReadFile(c.name, make([]byte, 0, 16), c.limit)
		switch {
		case c.ok && (err != nil || len(data) != 1000):
			t.Errorf("ReadFile(%s, limit %d) = %d bytes, %v; want the file", c.name, c.limit, len(data), err)
		case !c.ok && !errors.Is(err, sandbox.ErrTooLarge):
			t.Errorf("ReadFile(%s, limit %d) = %d bytes, %v; want too large", c.name, c.limit, len(data), err)
		}
	}
}

// TestDirHandleReusesBuffer: a buffer large enough is read into, not
// replaced, so search's pooled buffers are reused.
func TestDirHandleReusesBuffer(t *testing.T) {
	ws, _, _ := escapeTree(t)
	h, err := ws.OpenDirHandle("pkg")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Path() != "pkg" {
		t.Errorf("Path = %q", h.Path())
	}
	buf := make([]byte, 3, 4096)
	data, err := h.ReadFile("a.go", buf, 0)
	if err != nil || string(data) != "inside\n" {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	if &data[0] != &buf[:1][0] {
		t.Errorf("ReadFile did not read into the given buffer")
	}
}
