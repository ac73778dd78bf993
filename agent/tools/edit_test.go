package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/agent/secrets"
)

const mainGo = "package main\n\nfunc add(a, b int) int {\n\treturn a - b\n}\n\nfunc sub(a, b int) int {\n\treturn a - b\n}\n"

type editCall = map[string]any

func edits(es ...Edit) editCall { return editCall{"edits": es} }

func TestEdit(t *testing.T) {
	tests := map[string]struct {
		files    map[string]string
		read     []string // files read before the edit
		args     any
		code     Code
		inText   string            // must appear in the result text
		want     map[string]string // file contents afterwards
		changed  []string
		protects []string
	}{
		"clean edit": {
			files: map[string]string{"main.go": mainGo}, read: []string{"main.go"},
			args:    edits(Edit{Path: "main.go", OldText: "func add(a, b int) int {\n\treturn a - b", NewText: "func add(a, b int) int {\n\treturn a + b"}),
			want:    map[string]string{"main.go": strings.Replace(mainGo, "return a - b", "return a + b", 1)},
			changed: []string{"main.go"},
		},
		"two edits to one file apply in sequence": {
			files: map[string]string{"a.txt": "one\ntwo\nthree\n"}, read: []string{"a.txt"},
			args: edits(Edit{Path: "a.txt", OldText: "two", NewText: "2"},
				Edit{Path: "a.txt", OldText: "one\n2", NewText: "1\n2"}),
			want:    map[string]string{"a.txt": "1\n2\nthree\n"},
			changed: []string{"a.txt"},
		},
		"old_text not in the file": {
			files: map[string]string{"main.go": mainGo}, read: []string{"main.go"},
			args:   edits(Edit{Path: "main.go", OldText: "return a * b", NewText: "return a + b"}),
			code:   NoMatch,
			inText: "closest line", want: map[string]string{"main.go": mainGo},
		},
		"indentation differs": {
			files: map[string]string{"main.go": mainGo}, read: []string{"main.go"},
			args:   edits(Edit{Path: "main.go", OldText: "func add(a, b int) int {\n    return a - b\n", NewText: "x"}),
			code:   NoMatch,
			inText: "lines 3-4 match old_text except for whitespace", want: map[string]string{"main.go": mainGo},
		},
		"ambiguous with the count": {
			files: map[string]string{"main.go": mainGo}, read: []string{"main.go"},
			args:   edits(Edit{Path: "main.go", OldText: "return a - b", NewText: "return a + b"}),
			code:   AmbiguousMatch,
			inText: "occurs 2 times in main.go (at lines 4, 8)", want: map[string]string{"main.go": mainGo},
		},
		"never read": {
			files: map[string]string{"main.go": mainGo},
			args:  edits(Edit{Path: "main.go", OldText: "func add", NewText: "func plus"}),
			code:  StaleFile, inText: "has not been read", want: map[string]string{"main.go": mainGo},
		},
		"second file fails: first untouched": {
			files: map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"}, read: []string{"a.txt", "b.txt"},
			args: edits(Edit{Path: "a.txt", OldText: "alpha", NewText: "ALPHA"},
				Edit{Path: "b.txt", OldText: "gamma", NewText: "GAMMA"}),
			code: NoMatch, inText: "edit 2 of 2",
			want: map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"},
		},
		"second edit of the same file fails": {
			files: map[string]string{"a.txt": "alpha\nbeta\n"}, read: []string{"a.txt"},
			args: edits(Edit{Path: "a.txt", OldText: "alpha", NewText: "ALPHA"},
				Edit{Path: "a.txt", OldText: "alpha", NewText: "x"}),
			code: NoMatch, want: map[string]string{"a.txt": "alpha\nbeta\n"},
		},
		"protected path": {
			files: map[string]string{".github/workflows/ci.yml": "on: push\n"}, read: []string{".github/workflows/ci.yml"},
			protects: []string{".github/workflows/**"},
			args:     edits(Edit{Path: ".github/workflows/ci.yml", OldText: "push", NewText: "pull_request"}),
			code:     PathDenied, inText: "protected", want: map[string]string{".github/workflows/ci.yml": "on: push\n"},
		},
		"secret path": {
			files: map[string]string{".env": "TOKEN=x\n"},
			args:  edits(Edit{Path: ".env", OldText: "x", NewText: "y"}),
			code:  PathDenied, want: map[string]string{".env": "TOKEN=x\n"},
		},
		"outside the repository": {
			args: edits(Edit{Path: "../../etc/passwd", OldText: "root", NewText: "toor"}),
			code: PathDenied,
		},
		"missing file": {
			args: edits(Edit{Path: "nope.go", OldText: "a", NewText: "b"}),
			code: NotFound,
		},
		"empty old_text": {
			files: map[string]string{"a.txt": "a\n"}, read: []string{"a.txt"},
			args: edits(Edit{Path: "a.txt", OldText: "", NewText: "b"}),
			code: InvalidArguments, want: map[string]string{"a.txt": "a\n"},
		},
		"no edits": {
			args: edits(), code: InvalidArguments,
		},
		"CRLF file edited with plain newlines keeps CRLF": {
			files: map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n"}, read: []string{"w.txt"},
			args:    edits(Edit{Path: "w.txt", OldText: "one\ntwo\n", NewText: "one\nTWO\nextra\n"}),
			want:    map[string]string{"w.txt": "one\r\nTWO\r\nextra\r\nthree\r\n"},
			changed: []string{"w.txt"},
		},
		"missing final newline is kept": {
			files: map[string]string{"n.txt": "a\nb"}, read: []string{"n.txt"},
			args:    edits(Edit{Path: "n.txt", OldText: "b", NewText: "c"}),
			want:    map[string]string{"n.txt": "a\nc"},
			changed: []string{"n.txt"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, tc.files, func(o *Options) { o.Protected = tc.protects })
			for _, r := range tc.read {
				wantCode(t, env.call(t, "read_file", ReadFileParams{Path: r}), "")
			}
			res := env.call(t, "edit", tc.args)
			wantCode(t, res, tc.code)
			if !strings.Contains(res.Text, tc.inText) {
				t.Errorf("text lacks %q:\n%s", tc.inText, res.Text)
			}
			for p, want := range tc.want {
				if got := env.read(t, p); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			if strings.Join(res.Changed, ",") != strings.Join(tc.changed, ",") {
				t.Errorf("Changed = %v, want %v", res.Changed, tc.changed)
			}
		})
	}
}

// A formatter (or any command) rewrites the file after the model read it:
// the edit must not land on content the model has not seen.
func TestEditAfterFormatterIsStale(t *testing.T) {
	env := newEnv(t, map[string]string{"main.go": mainGo})
	wantCode(t, env.call(t, "read_file", ReadFileParams{Path: "main.go"}), "")
	formatted := strings.ReplaceAll(mainGo, "\t", "    ")
	if err := os.WriteFile(filepath.Join(env.dir, "main.go"), []byte(formatted), 0o644); err != nil {
		t.Fatal(err)
	}
	res := env.call(t, "edit", edits(Edit{Path: "main.go", OldText: "func add", NewText: "func plus"}))
	wantCode(t, res, StaleFile)
	if !strings.Contains(res.Text, "changed since you last read it") {
		t.Errorf("text: %s", res.Text)
	}
	if got := env.read(t, "main.go"); got != formatted {
		t.Errorf("file changed: %q", got)
	}
	// After a new read the same edit goes through.
	wantCode(t, env.call(t, "read_file", ReadFileParams{Path: "main.go"}), "")
	wantCode(t, env.call(t, "edit", edits(Edit{Path: "main.go", OldText: "func add", NewText: "func plus"})), "")
}

// An edit updates the recorded version, so a second edit needs no re-read,
// and write_file over the edited file is allowed too.
func TestEditUpdatesReadState(t *testing.T) {
	env := newEnv(t, map[string]string{"a.txt": "one\n"})
	env.call(t, "read_file", ReadFileParams{Path: "a.txt"})
	wantCode(t, env.call(t, "edit", edits(Edit{Path: "a.txt", OldText: "one", NewText: "two"})), "")
	wantCode(t, env.call(t, "edit", edits(Edit{Path: "a.txt", OldText: "two", NewText: "three"})), "")
	wantCode(t, env.call(t, "write_file", WriteFileParams{Path: "a.txt", Content: "four\n"}), "")
	if got := env.read(t, "a.txt"); got != "four\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// failingWrites wraps the workspace and fails the nth WriteFile of a path,
// after truncating the file as a real failed write might.
type failingWrites struct {
	files
	failPath string
	failed   bool
}

func (f *failingWrites) WriteFile(name string, data []byte) error {
	if name == f.failPath && !f.failed {
		f.failed = true
		_ = f.files.WriteFile(name, nil)
		return errors.New("disk full")
	}
	return f.files.WriteFile(name, data)
}

// A write that fails midway restores the files already written: the call
// leaves every file byte-identical and ends as an infrastructure error.
func TestEditWriteFailureRestores(t *testing.T) {
	env := newEnv(t, map[string]string{"a.txt": "alpha\r\n\x00bytes", "b.txt": "beta\n", "c.txt": "gamma\n"})
	fw := &failingWrites{files: env.ws, failPath: "b.txt"}
	sc, err := secrets.Default()
	if err != nil {
		t.Fatal(err)
	}
	env.set = newSet(fw, Options{Sandbox: env.sb, Verifier: env.ver, Secrets: sc})
	for _, p := range []string{"b.txt", "c.txt"} {
		env.call(t, "read_file", ReadFileParams{Path: p})
	}
	// a.txt has a NUL byte so read_file refuses it; record it by hand, as
	// the test is about the writes.
	env.set.reads.record("a.txt", []byte("alpha\r\n\x00bytes"))
	_, err = env.callErr(t, "edit", edits(
		Edit{Path: "a.txt", OldText: "alpha", NewText: "ALPHA"},
		Edit{Path: "b.txt", OldText: "beta", NewText: "BETA"},
		Edit{Path: "c.txt", OldText: "gamma", NewText: "GAMMA"},
	))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the write failure", err)
	}
	for p, want := range map[string]string{"a.txt": "alpha\r\n\x00bytes", "b.txt": "beta\n", "c.txt": "gamma\n"} {
		if got := env.read(t, p); got != want {
			t.Errorf("%s = %q, want %q (byte-identical)", p, got, want)
		}
	}
}

func TestWriteFile(t *testing.T) {
	outside := t.TempDir()
	tests := map[string]struct {
		files    map[string]string
		read     []string
		path     string
		code     Code
		want     string // content of path afterwards ("" = must not exist)
		protects []string
	}{
		"create with directories":   {path: "pkg/new/x.go", want: "data"},
		"overwrite without reading": {files: map[string]string{"a.txt": "old"}, path: "a.txt", code: StaleFile, want: "old"},
		"overwrite after reading":   {files: map[string]string{"a.txt": "old"}, read: []string{"a.txt"}, path: "a.txt", want: "data"},
		"secret file":               {path: "config/.env.local", code: PathDenied},
		"private key":               {path: "id_rsa", code: PathDenied},
		"protected":                 {path: ".github/workflows/x.yml", code: PathDenied, protects: []string{".github/workflows/**"}},
		"inside .git":               {path: ".git/config", code: PathDenied},
		"absolute":                  {path: "/tmp/x", code: PathDenied},
		"root":                      {path: ".", code: InvalidArguments},
		"through a symlinked dir pointing outside": {
			files: map[string]string{"out": "->" + outside}, path: "out/evil.txt", code: PathDenied,
		},
		"onto a symlink": {
			files: map[string]string{"link.txt": "->target.txt", "target.txt": "t"}, path: "link.txt", code: PathDenied, want: "t",
		},
		"a directory": {files: map[string]string{"d/x": "x"}, path: "d", code: InvalidArguments},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, tc.files, func(o *Options) { o.Protected = tc.protects })
			for _, r := range tc.read {
				env.call(t, "read_file", ReadFileParams{Path: r})
			}
			res := env.call(t, "write_file", WriteFileParams{Path: tc.path, Content: "data"})
			wantCode(t, res, tc.code)
			if filepath.IsAbs(tc.path) || tc.path == "." {
				return
			}
			got, err := os.ReadFile(filepath.Join(env.dir, tc.path))
			switch {
			case tc.want == "" && err == nil && tc.code != "" && !strings.Contains(name, "directory"):
				t.Errorf("%s was written: %q", tc.path, got)
			case tc.want != "" && string(got) != tc.want:
				t.Errorf("%s = %q (err %v), want %q", tc.path, got, err, tc.want)
			}
		})
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 0 {
		t.Errorf("something was written outside the workspace: %v %v", entries, err)
	}
}

func TestDeleteFile(t *testing.T) {
	tests := map[string]struct {
		path string
		code Code
	}{
		"file":        {path: "a.txt"},
		"missing":     {path: "zzz.txt", code: NotFound},
		"directory":   {path: "d", code: InvalidArguments},
		"secret":      {path: ".env", code: PathDenied},
		"protected":   {path: "locked/x.txt", code: PathDenied},
		"outside":     {path: "../x", code: PathDenied},
		"inside .git": {path: ".git/HEAD", code: PathDenied},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, map[string]string{"a.txt": "a", "d/x": "x", ".env": "S=1", "locked/x.txt": "x", ".git/HEAD": "ref"},
				func(o *Options) { o.Protected = []string{"locked/**"} })
			res := env.call(t, "delete_file", DeleteFileParams{Path: tc.path})
			wantCode(t, res, tc.code)
			_, err := os.Lstat(filepath.Join(env.dir, tc.path))
			if deleted := os.IsNotExist(err); deleted != (tc.code == "") && tc.code != NotFound && tc.path != "../x" {
				t.Errorf("deleted = %v, want %v", deleted, tc.code == "")
			}
		})
	}
}

// Tools are called concurrently when a model sends parallel calls: the
// shared read-state and the write lock must hold up under -race.
func TestConcurrentCalls(t *testing.T) {
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("value %d\n", i)
	}
	env := newEnv(t, files)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p := fmt.Sprintf("f%d.txt", i)
			if res := env.call(t, "read_file", ReadFileParams{Path: p}); res.Code != "" {
				t.Error(res.Text)
				return
			}
			if res := env.call(t, "edit", edits(Edit{Path: p, OldText: "value", NewText: "VALUE"})); res.Code != "" {
				t.Error(res.Text)
			}
			env.call(t, "search", SearchParams{Pattern: "VALUE"})
		})
	}
	wg.Wait()
	for i := range 8 {
		if got, want := env.read(t, fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("VALUE %d\n", i); got != want {
			t.Errorf("f%d.txt = %q, want %q", i, got, want)
		}
	}
}
