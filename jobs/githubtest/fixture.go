package githubtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Fixture reads shared/fixtures/dir/name, the real payloads and responses
// kept beside the repository, from any package's tests: it looks for
// shared/fixtures in the working directory's parents.
func Fixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "fixtures", dir, name)
		if data, err := os.ReadFile(p); err == nil {
			return data
		}
		if filepath.Dir(d) == d {
			t.Fatalf("fixture %s/%s: no shared/fixtures above %s", dir, name, wd)
		}
	}
}
