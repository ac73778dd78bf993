package findings

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mod, add and del build changed files; "\n" leading newlines in the
// raw-string sources below are trimmed so line 1 is the first line shown.
func mod(p, base, next string) File { return File{Path: p, Base: src(base), New: src(next)} }
func add(p, next string) File       { return File{Path: p, New: src(next)} }
func del(p, base string) File       { return File{Path: p, Base: src(base)} }

func src(s string) []byte { return []byte(strings.TrimPrefix(s, "\n")) }

// where renders findings as "kind path:line", the shape the tables want.
func where(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s:%d", f.Kind, f.Path, f.Line))
	}
	return out
}

// analysisCase is one scripted change and the findings it must produce.
type analysisCase struct {
	files []File
	title string
	// checks are passed through; most cases have none.
	checks []Check
	read   []string
	limits Limits
	want   []string
}

// runCases runs a table and returns each case's findings for the golden
// file of Detail sentences.
func runCases(t *testing.T, cases map[string]analysisCase) map[string][]Finding {
	t.Helper()
	got := map[string][]Finding{}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			title := tc.title
			if title == "" {
				title = "Add a greeting option"
			}
			read := tc.read
			if read == nil {
				read = readAll(tc.files) // scope cases say what was read
			}
			fs := Analyze(Input{Files: tc.files, IssueTitle: title, Checks: tc.checks, Read: read, Limits: tc.limits})
			got[name] = fs
			w := where(fs)
			if tc.want == nil {
				tc.want = []string{}
			}
			if strings.Join(w, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings:\n  %s\nwant:\n  %s\ndetails:\n  %s", strings.Join(w, "\n  "), strings.Join(tc.want, "\n  "), details(fs))
			}
			for _, f := range fs {
				if f.Detail == "" || strings.Count(f.Detail, ". ") > 0 || !strings.HasSuffix(f.Detail, ".") {
					t.Errorf("detail is not one sentence: %q", f.Detail)
				}
			}
		})
	}
	return got
}

func details(fs []Finding) string {
	var b []string
	for _, f := range fs {
		b = append(b, f.Detail)
	}
	return strings.Join(b, "\n  ")
}

// replace is strings.Replace that fails loudly when old is absent, so a
// case cannot silently test an unchanged file.
func replace(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic(fmt.Sprintf("replace: %q not in source", old))
	}
	return strings.ReplaceAll(s, old, new)
}

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the findings")

// golden compares every case's Detail sentences with testdata/NAME.golden,
// the wording the pull-request body shows.
func golden(t *testing.T, name string, got map[string][]Finding) {
	t.Helper()
	var b strings.Builder
	for _, c := range slices.Sorted(maps.Keys(got)) {
		for _, f := range got[c] {
			fmt.Fprintf(&b, "%s | %s %s:%d\n  %s\n", c, f.Kind, f.Path, f.Line, f.Detail)
		}
	}
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("details differ from %s (go test -update rewrites it):\n%s", file, lineDiffText(string(want), b.String()))
	}
}

func lineDiffText(a, b string) string {
	var out []string
	for _, op := range lineDiff(a, b) {
		if op.Op != '=' {
			out = append(out, string(op.Op)+" "+op.Text)
		}
	}
	return strings.Join(out, "\n")
}

// readAll is the reads of a model that read every file it changed.
func readAll(files []File) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}
