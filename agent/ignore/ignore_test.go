package ignore

import (
	"io/fs"
	"testing"
)

func TestIgnored(t *testing.T) {
	files := map[string]string{
		".gitignore":     "*.log\n# comment\n\nbuild/\n!keep.log\n",
		"sub/.gitignore": "secret.txt\r\n/local-only\n",
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	m := New(read)
	for _, tc := range []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.log", false, true},
		{"keep.log", false, false},
		{"deep/x/y.log", false, true},
		{"build", true, true},
		{"src/build", true, true},
		{"build", false, false}, // a file named build is not the directory rule
		{"main.go", false, false},
		{"sub/secret.txt", false, true},
		{"secret.txt", false, false}, // sub's rule is scoped to sub
		{"sub/local-only", false, true},
		{"sub/x/local-only", false, false}, // anchored to sub
	} {
		if got := m.Ignored(tc.path, tc.isDir); got != tc.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
}
