package githubtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Fixture reads testdata/fixtures/dir/name of the module, the real
// payloads and responses the tests use (testdata/fixtures/SOURCES.md says
// where each came from), from any package's tests: it walks up from the
// working directory to the module root, the directory holding go.mod.
func Fixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ModuleRoot(t), "testdata", "fixtures", dir, name))
	if err != nil {
		t.Fatalf("fixture %s/%s: %v", dir, name, err)
	}
	return data
}

// ModuleRoot is the nearest directory above the working directory (or
// that directory itself) that holds go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}
