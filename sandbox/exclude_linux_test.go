//go:build linux

package sandbox_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

func TestExcludedLeftOutOfHandles(t *testing.T) {
	ws := excludeTree(t)
	root, err := ws.OpenDirHandle(".")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var names []string
	if err := root.List(func(e sandbox.Entry, _ error) { names = append(names, e.Name()) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"docs", "main.go"}; !slices.Equal(names, want) {
		t.Errorf("List(.) = %q, want %q", names, want)
	}
	if _, err := root.Sub("data"); !errors.Is(err, sandbox.ErrPathDenied) {
		t.Errorf("Sub(data) = %v, want excluded", err)
	}
	docs, err := root.Sub("docs")
	if err != nil {
		t.Fatal(err)
	}
	defer docs.Close()
	if b, err := docs.ReadFile("private.md", nil, 0); !errors.Is(err, sandbox.ErrPathDenied) || strings.Contains(string(b), "secret") {
		t.Errorf("ReadFile(docs/private.md) = %q, %v, want excluded", b, err)
	}
	if _, err := docs.ReadFile("public.md", nil, 0); err != nil {
		t.Errorf("ReadFile(docs/public.md) = %v", err)
	}
}
