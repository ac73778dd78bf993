package sandbox_test

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestModelSeesTheSameFiles runs the one table of hostile trees through
// Visible and WalkVisible, the answer every reader of the model uses;
// agent/tools and agent hold the same table against the tools, the
// instruction files and the repository map.
func TestModelSeesTheSameFiles(t *testing.T) {
	dir, entries := sandboxtest.HostileTree(t)
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, e := range entries {
		err := ws.Visible(e.Path)
		switch {
		case e.Visible && err != nil:
			t.Errorf("Visible(%q) (%s) = %v, want nil", e.Path, e.What, err)
		case !e.Visible && !errors.Is(err, sandbox.ErrPathDenied):
			t.Errorf("Visible(%q) (%s) = %v, want path denied", e.Path, e.What, err)
		}
	}
	if err := ws.Visible("nope.go"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Visible(missing) = %v, want not exist", err)
	}
	if err := ws.Visible("main.go/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Visible(under a file) = %v, want not exist", err)
	}
	var got []string
	err = ws.WalkVisible(".", func(p string, d fs.DirEntry, err error) error {
		var nv *sandbox.NotVisibleError
		switch {
		case errors.As(err, &nv):
			return nil
		case err == nil && !d.IsDir():
			got = append(got, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := sandboxtest.VisibleFiles(entries)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("WalkVisible listed %q\nwant %q", got, want)
	}
}

// A hard link made after the index was built is seen once Changed says
// a command ran; a link whose secret name is removed is no longer hidden.
func TestVisibleAfterChanged(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".env", "TOKEN=x\n")
	write(t, dir, "notes.txt", "notes\n")
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.Visible("notes.txt"); err != nil {
		t.Fatal(err)
	}
	link(t, dir, ".env", "copy.txt")
	ws.Changed()
	if err := ws.Visible("copy.txt"); !errors.Is(err, sandbox.ErrPathDenied) || !strings.Contains(err.Error(), "hard link") {
		t.Errorf("Visible(copy.txt) after ln .env = %v", err)
	}
	remove(t, dir, ".env")
	ws.Changed()
	if err := ws.Visible("copy.txt"); err != nil {
		t.Errorf("Visible(copy.txt) once .env is gone = %v (it has one name now)", err)
	}
}

func TestIsBinary(t *testing.T) {
	text := []byte(strings.Repeat("a", 9000))
	at := func(i int) []byte { b := slices.Clone(text); b[i] = 0; return b }
	for _, tt := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"empty", nil, false},
		{"text", text, false},
		{"NUL at 0", at(0), true},
		{"NUL at 7999", at(7999), true},
		// git's rule looks at 8,000 bytes, not 8 KiB.
		{"NUL at 8000", at(8000), false},
		{"NUL at 8100", at(8100), false},
	} {
		if got := sandbox.IsBinary(tt.b); got != tt.want {
			t.Errorf("IsBinary(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
