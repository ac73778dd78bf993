package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	files := map[string]string{
		".gitignore":       "vendor/\n*.gen.go\n",
		"a.go":             "package a\n\nfunc Handle() {}\nfunc handleLower() {}\n",
		"b.go":             "package b\r\n\r\nfunc HandleB() {}\r\n",
		"z.gen.go":         "func HandleGenerated() {}\n",
		"vendor/v.go":      "func HandleVendor() {}\n",
		"sub/c.txt":        "Handle here\nand Handle Handle twice on one line\n",
		"sub/.gitignore":   "skip.txt\n",
		"sub/skip.txt":     "Handle ignored\n",
		"bin.dat":          "Handle\x00binary",
		"long.txt":         strings.Repeat("x", 500) + "Handle" + strings.Repeat("y", 500) + "\n",
		".env":             "Handle=secret\n",
		"link.txt":         "->a.go",
		"out":              "->/etc",
		"utf8.txt":         strings.Repeat("é", 150) + " Handle\n",
		"multi/m.txt":      "first\nsecond\n",
		"nomatch/only.txt": "nothing\n",
	}
	tests := map[string]struct {
		args any
		code Code
		want string // exact text
		has  []string
	}{
		"literal across the tree": {
			args: SearchParams{Pattern: "func Handle"},
			want: "a.go:3: func Handle() {}\nb.go:3: func HandleB() {}\n[skipped 1 binary and 0 large files]\n",
		},
		"regexp, case-insensitive, glob by name": {
			args: SearchParams{Pattern: `(?i)func handle\w*\(`, Glob: "*.go"},
			want: "a.go:3: func Handle() {}\na.go:4: func handleLower() {}\nb.go:3: func HandleB() {}\n",
		},
		"one result per line, nested .gitignore": {
			args: SearchParams{Pattern: "Handle", Path: "sub"},
			want: "sub/c.txt:1: Handle here\nsub/c.txt:2: and Handle Handle twice on one line\n",
		},
		"anchors work per line": {
			args: SearchParams{Pattern: "^second$"},
			want: "multi/m.txt:2: second\n[skipped 1 binary and 0 large files]\n",
		},
		"a single file": {
			args: SearchParams{Pattern: "package", Path: "b.go"},
			want: "b.go:1: package b\n",
		},
		"long lines are cut": {
			args: SearchParams{Pattern: "Handle", Glob: "long.txt"},
			want: "long.txt:1: " + strings.Repeat("x", 200) + "… [806 more bytes]\n",
		},
		"cut at a rune boundary": {
			args: SearchParams{Pattern: "Handle", Glob: "utf8.txt"},
			want: "utf8.txt:1: " + strings.Repeat("é", 100) + "… [107 more bytes]\n",
		},
		"no matches":     {args: SearchParams{Pattern: "Nowhere", Path: "nomatch"}, want: "no matches\n"},
		"bad regexp":     {args: SearchParams{Pattern: "func (a"}, code: InvalidArguments, has: []string{"missing closing )"}},
		"lookahead":      {args: SearchParams{Pattern: "a(?=b)"}, code: InvalidArguments},
		"empty pattern":  {args: SearchParams{}, code: InvalidArguments},
		"bad glob":       {args: SearchParams{Pattern: "x", Glob: "[z-"}, code: InvalidArguments},
		"outside":        {args: SearchParams{Pattern: "root", Path: "../.."}, code: PathDenied},
		"through a link": {args: SearchParams{Pattern: "root", Path: "out"}, code: PathDenied},
		"secret file":    {args: SearchParams{Pattern: "Handle", Path: ".env"}, code: PathDenied},
		"missing":        {args: SearchParams{Pattern: "x", Path: "nope"}, code: NotFound},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, files)
			res := env.call(t, "search", tc.args)
			wantCode(t, res, tc.code)
			if tc.code == "" && res.Text != tc.want {
				t.Errorf("got:\n%q\nwant:\n%q", res.Text, tc.want)
			}
			for _, h := range tc.has {
				if !strings.Contains(res.Text, h) {
					t.Errorf("text lacks %q:\n%s", h, res.Text)
				}
			}
		})
	}
}

func TestSearchCapAndOrder(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f.txt", i)] = "hit 1\nmiss\nhit 2\n"
	}
	env := newEnv(t, files, func(o *Options) { o.Limits.MaxSearchResults = 5 })
	res := env.call(t, "search", SearchParams{Pattern: "hit"})
	wantCode(t, res, "")
	// Walk order (d0, d1, d10, d11, ...) whatever order the workers finish in.
	want := "d0/f.txt:1: hit 1\nd0/f.txt:3: hit 2\nd1/f.txt:1: hit 1\nd1/f.txt:3: hit 2\nd10/f.txt:1: hit 1\n" +
		"[75 more matching lines omitted (80 matches in 40 files in all); narrow the search with path, glob or a more specific pattern]\n"
	if res.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Text, want)
	}
}

func TestSearchSkipsLargeFiles(t *testing.T) {
	env := newEnv(t, map[string]string{"big.txt": strings.Repeat("needle\n", 200), "small.txt": "needle\n"},
		func(o *Options) { o.Limits.MaxSearchFileBytes = 100 })
	res := env.call(t, "search", SearchParams{Pattern: "needle"})
	want := "small.txt:1: needle\n[skipped 0 binary and 1 large files]\n"
	if res.Text != want {
		t.Errorf("got %q, want %q", res.Text, want)
	}
}

// TestSearchWalkOrder pins the order of a lexical walk where it differs
// from sorting the paths as strings ("a-b/x" < "a.txt" < "a/x"), and a
// directory large enough to be searched by several workers in runs.
func TestSearchWalkOrder(t *testing.T) {
	files := map[string]string{"a/x.txt": "hit\n", "a-b/x.txt": "hit\n", "a.txt": "hit\n"}
	var want strings.Builder
	want.WriteString("a/x.txt:1: hit\na-b/x.txt:1: hit\na.txt:1: hit\n")
	for i := range 3*maxBatch + 5 {
		files[fmt.Sprintf("big/f%03d.txt", i)] = "hit\n"
		fmt.Fprintf(&want, "big/f%03d.txt:1: hit\n", i)
	}
	env := newEnv(t, files, func(o *Options) { o.Limits.MaxSearchResults = 1000 })
	res := env.call(t, "search", SearchParams{Pattern: "hit"})
	wantCode(t, res, "")
	if res.Text != want.String() {
		t.Errorf("got:\n%s\nwant:\n%s", res.Text, want.String())
	}
}

func TestWalkOrder(t *testing.T) {
	sorted := []string{"a/x", "a/y/z", "a-b/x", "a.txt", "b", "ba/c"}
	for i, a := range sorted {
		for j, b := range sorted {
			if got, want := walkOrder(a, b), cmp.Compare(i, j); got != want {
				t.Errorf("walkOrder(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestSearchReleasesHandles: a search closes every directory handle it
// opened, also when its context ends before the walk does (the tasks
// still queued then must release theirs), so a worker does not run out of
// descriptors over many searches.
func TestSearchReleasesHandles(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/e%d/f%03d.txt", i%7, i%5, i)] = "hit\n"
	}
	env := newEnv(t, files)
	search, _ := env.set.Lookup("search")
	args, _ := json.Marshal(SearchParams{Pattern: "hit"})
	before := openFDs(t)
	for range 20 {
		if res, err := search.Call(context.Background(), args); err != nil || res.Code != "" {
			t.Fatalf("search: %v %s", err, res.Text)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := search.Call(ctx, args); !errors.Is(err, context.Canceled) {
			t.Fatalf("search with an ended context: %v, want canceled", err)
		}
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after 40 searches, %d before", after, before)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	return len(entries)
}

// TestSearchNeverLeavesTheTree: directories and files that are links to
// the outside, at the top and below, yield nothing from outside.
func TestSearchNeverLeavesTheTree(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "o.txt"), []byte("needle outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, map[string]string{"in.txt": "needle inside\n", "sub/x.txt": "needle below\n"})
	for _, l := range []string{"out", "sub/out", "sub/o.txt"} {
		target := outside
		if strings.HasSuffix(l, ".txt") {
			target = filepath.Join(outside, "o.txt")
		}
		if err := os.Symlink(target, filepath.Join(env.dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	res := env.call(t, "search", SearchParams{Pattern: "needle"})
	if want := "in.txt:1: needle inside\nsub/x.txt:1: needle below\n"; res.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Text, want)
	}
	for _, p := range []string{"out", "sub/out"} {
		wantCode(t, env.call(t, "search", SearchParams{Pattern: "needle", Path: p}), PathDenied)
	}
}
