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
// and some binary files). Each round runs both, in turns, the first of the
// pair alternating, so that a busy moment on a shared machine costs both
// alike. Each sub-benchmark reports the medians (patchwright_ms, rg_ms)
// and their ratio. Run:
//
//	go test -run '^$' -bench BenchmarkSearch -benchtime 8x -v ./agent/tools/
//
// ripgrep needs no flags to search the files search does: it too honours
// .gitignore and skips binary files; the hidden files it skips are .git,
// which search never enters, and .gitignore, which matches neither
// pattern. checkSameMatches holds the two to the same count of lines.
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
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg is not installed (apt-get install ripgrep): no comparison")
	}

	for _, q := range benchQueries {
		args, _ := json.Marshal(SearchParams{Pattern: q.pattern})
		ours := func(b *testing.B) {
			res, err := search.Call(context.Background(), args)
			if err != nil || res.Code != "" {
				b.Fatalf("search: %v %s", err, res.Text)
			}
		}
		theirs := func(b *testing.B) {
			cmd := exec.Command(rg, "--no-heading", "--line-number", "--color=never", q.pattern, ".")
			cmd.Dir = dir
			// A pipe, not /dev/null: ripgrep stops at the first match
			// when its output is /dev/null.
			cmd.Stdout = io.Discard
			if err := cmd.Run(); err != nil {
				b.Fatalf("rg: %v", err)
			}
		}
		b.Run(q.name, func(b *testing.B) {
			checkSameMatches(b, search, rg, dir, q.pattern)
			tools := [2]func(*testing.B){ours, theirs}
			var times [2][]time.Duration
			round := 0
			for b.Loop() {
				for k := range 2 {
					tool := (round + k) % 2
					start := time.Now()
					tools[tool](b)
					times[tool] = append(times[tool], time.Since(start))
				}
				round++
			}
			p, r := median(times[0]), median(times[1])
			b.ReportMetric(p, "patchwright_ms")
			b.ReportMetric(r, "rg_ms")
			b.ReportMetric(p/r, "ratio")
			b.ReportMetric(0, "ns/op") // each op is a pair of searches: meaningless
			b.Logf("%s %q: patchwright median %.1f ms, ripgrep median %.1f ms, ratio %.2f (%d rounds)", q.name, q.pattern, p, r, p/r, round)
		})
	}
}

// median returns the median of times in milliseconds.
func median(times []time.Duration) float64 {
	slices.Sort(times)
	return float64(times[len(times)/2]) / float64(time.Millisecond)
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
