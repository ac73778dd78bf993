package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// benchQueries are searched in the generated repository by both our search
// tool and ripgrep: a rare literal, and a regexp with many matches and no
// literal prefix.
var benchQueries = []struct{ name, pattern string }{
	{"literal", "func HandleRequest"},
	{"regexp", `\w+Handler\(ctx`},
}

// BenchmarkSearch compares the search tool with ripgrep on a generated
// repository of 10,000 files (about 40 MB, with a .gitignore'd directory
// and some binary files). Each sub-benchmark reports its median time per
// search as median_ms; the ratio patchwright/ripgrep is logged. Run:
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 20x ./agent/tools/
func BenchmarkSearch(b *testing.B) {
	dir := generateRepo(b, 10000)
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	set, err := New(Options{Workspace: ws, Sandbox: &fakeSandbox{}, Verifier: &fakeVerifier{}})
	if err != nil {
		b.Fatal(err)
	}
	search, _ := set.Lookup("search")
	rg, rgErr := exec.LookPath("rg")

	for _, q := range benchQueries {
		args, _ := json.Marshal(SearchParams{Pattern: q.pattern})
		var ours, theirs float64
		b.Run(q.name+"/patchwright", func(b *testing.B) {
			ours = medianMS(b, func() {
				res, err := search.Call(context.Background(), args)
				if err != nil || res.Code != "" {
					b.Fatalf("search: %v %s", err, res.Text)
				}
			})
		})
		b.Run(q.name+"/ripgrep", func(b *testing.B) {
			if rgErr != nil {
				b.Skip("rg is not installed (apt-get install ripgrep): no comparison")
			}
			theirs = medianMS(b, func() {
				cmd := exec.Command(rg, "--no-heading", "--line-number", "--color=never", q.pattern, ".")
				cmd.Dir = dir
				// A pipe, not /dev/null: ripgrep stops at the first match
				// when its output is /dev/null.
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatalf("rg: %v", err)
				}
			})
		})
		if ours > 0 && theirs > 0 {
			checkSameMatches(b, search, rg, dir, q.pattern)
			b.Logf("%s %q: patchwright median %.1f ms, ripgrep median %.1f ms, ratio %.2f", q.name, q.pattern, ours, theirs, ours/theirs)
		}
	}
}

// medianMS times each of b.N runs of fn and reports the median.
func medianMS(b *testing.B, fn func()) float64 {
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		fn()
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	med := float64(times[len(times)/2]) / float64(time.Millisecond)
	b.ReportMetric(med, "median_ms")
	return med
}

// checkSameMatches makes sure both tools did the same work: the same
// number of matching lines.
func checkSameMatches(b *testing.B, search Tool, rg, dir, pattern string) {
	b.Helper()
	args, _ := json.Marshal(SearchParams{Pattern: pattern})
	res, err := search.Call(context.Background(), args)
	if err != nil {
		b.Fatal(err)
	}
	ours := 0
	if m := regexp.MustCompile(`\((\d+) matches in`).FindStringSubmatch(res.Text); m != nil {
		ours, _ = strconv.Atoi(m[1])
	} else {
		ours = strings.Count(res.Text, "\n") - strings.Count(res.Text, "\n[")
	}
	cmd := exec.Command(rg, "--count", "--no-filename", pattern, ".")
	cmd.Dir = dir
	outb, err := cmd.Output()
	if err != nil {
		b.Fatalf("rg --count: %v", err)
	}
	theirs := 0
	for _, f := range strings.Fields(string(outb)) {
		n, _ := strconv.Atoi(f)
		theirs += n
	}
	if ours != theirs {
		b.Fatalf("%q: patchwright found %d matching lines, ripgrep %d", pattern, ours, theirs)
	}
}

// generateRepo writes n source-like files (2-6 KB each) in nested
// directories, a .gitignore'd build directory and a few binary files,
// deterministically.
func generateRepo(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"user", "order", "cache", "session", "config", "payment", "stream", "index", "token", "route"}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n*.tmp\n"), 0o644))
	for i := range n {
		var buf bytes.Buffer
		pkg := words[i%len(words)]
		fmt.Fprintf(&buf, "// Package %s does things.\npackage %s\n\nimport \"context\"\n\n", pkg, pkg)
		size := 2000 + r.IntN(4000)
		for j := 0; buf.Len() < size; j++ {
			w := words[r.IntN(len(words))]
			name := strings.ToUpper(w[:1]) + w[1:]
			switch r.IntN(20) {
			case 0:
				fmt.Fprintf(&buf, "func HandleRequest%d(ctx context.Context) error {\n\treturn nil\n}\n\n", j)
			case 1, 2, 3:
				fmt.Fprintf(&buf, "func (s *%sService) Get%s%d(ctx context.Context, id int) (*%s, error) {\n\treturn s.%sHandler(ctx, id)\n}\n\n", name, name, j, name, w)
			default:
				fmt.Fprintf(&buf, "// %s%d keeps the %s of a %s in memory.\nvar %s%d = map[string]int{\"%s\": %d}\n\n", w, j, w, words[r.IntN(len(words))], w, j, w, r.IntN(1000))
			}
		}
		rel := filepath.Join(fmt.Sprintf("pkg%02d", i%50), fmt.Sprintf("sub%d", i%4), fmt.Sprintf("file%05d.go", i))
		if i%97 == 0 {
			// Ignored: a build output and a temp file.
			rel = filepath.Join("build", fmt.Sprintf("gen%05d.go", i))
		} else if i%89 == 0 {
			rel = strings.TrimSuffix(rel, ".go") + ".tmp"
		} else if i%101 == 0 {
			buf.Reset()
			buf.WriteString("\x7fELF\x00\x00")
			buf.Write(bytes.Repeat([]byte("HandleRequest userHandler(ctx "), 100))
			rel = strings.TrimSuffix(rel, ".go") + ".bin"
		}
		p := filepath.Join(dir, rel)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, buf.Bytes(), 0o644))
	}
	return dir
}
