package findings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFindingsAgreeWithGoTest runs testsrc's table of Go test files (the
// one TestTestsrcAgreesWithGoTest checks against go test -list) through
// Analyze: deleting each file removes exactly the tests go test lists for
// it, benchmarks aside, which do not run on a plain go test.
func TestFindingsAgreeWithGoTest(t *testing.T) {
	root := filepath.Join("..", "testsrc", "testdata", "agree")
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		var want []string
		for l := range strings.Lines(string(src)) {
			if w, ok := strings.CutPrefix(strings.TrimSpace(l), "// want:"); ok {
				for _, name := range strings.Fields(w) {
					if name != "error" && !strings.HasPrefix(name, "Benchmark") {
						want = append(want, name)
					}
				}
			}
		}
		var got []string
		for _, f := range Analyze(Input{Files: []File{{Path: rel, Base: src}}, IssueTitle: "Add tests", Read: []string{rel}}) {
			if f.Kind != TestsRemoved {
				continue
			}
			for _, name := range want {
				if strings.Contains(f.Detail, `"`+name+`"`) {
					got = append(got, name)
				}
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s deleted: removed tests %q, want %q", rel, got, want)
		}
		return nil
	})
	if err != nil || n < 10 {
		t.Fatalf("read %s: %v (%d files)", root, err, n)
	}
}
