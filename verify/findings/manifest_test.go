package findings

import (
	"reflect"
	"testing"
)

func TestIsManifest(t *testing.T) {
	for p, want := range map[string]bool{
		"go.mod": true, "sub/go.sum": true, "package.json": true, "web/package-lock.json": true,
		"yarn.lock": true, "pnpm-lock.yaml": true, "requirements.txt": true, "requirements-dev.txt": true,
		"pyproject.toml": true, "poetry.lock": true, "Cargo.toml": true, "Cargo.lock": true, "pom.xml": true,
		"main.go": false, "go.mod.orig": false, "docs/package.json.md": false, "requirements.txt.bak": false,
		"Makefile": false, "": false,
		// Requirements split into a requirements/ directory.
		"requirements/dev.txt": true, "api/requirements/base.txt": true, "requirements/README.md": false, "docs/notes.txt": false,
	} {
		if got := IsManifest(p); got != want {
			t.Errorf("IsManifest(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestChangedDependencies(t *testing.T) {
	files := []File{
		{Path: "go.sum", Base: []byte("golang.org/x/text v0.19.0 h1:a=\n"),
			New: []byte("golang.org/x/text v0.20.0 h1:b=\nexample.com/textcase v1.0.0 h1:c=\nexample.com/indirect v0.1.0 h1:d=\n")},
		{Path: "go.mod", Base: []byte("module m\n\nrequire golang.org/x/text v0.19.0\n"),
			New: []byte("module m\n\nrequire (\n\tgolang.org/x/text v0.20.0\n\texample.com/textcase v1.0.0\n)\n")},
		{Path: "main.go", New: []byte("package main\n")},
		// A deleted manifest adds nothing.
		{Path: "web/package.json", Base: []byte(`{"dependencies":{"left-pad":"1.0.0"}}`)},
		// An unparsable one adds nothing either, and does not fail.
		{Path: "Cargo.toml", New: []byte("[dependencies\n")},
	}
	got := ChangedDependencies(files)
	// Manifests first; the lockfile adds only what no manifest named.
	want := []Dependency{
		{Path: "go.mod", What: "Go module", Name: "example.com/textcase", Version: "v1.0.0", Line: 5},
		{Path: "go.mod", What: "Go module", Name: "golang.org/x/text", Version: "v0.20.0", Was: "v0.19.0", Line: 4},
		{Path: "go.sum", What: "Go module", Name: "example.com/indirect", Version: "v0.1.0", Line: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ChangedDependencies =\n%+v\nwant\n%+v", got, want)
	}
}
