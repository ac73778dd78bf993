package tools

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/patchwright/patchwright/sandbox"
)

// secretFiles holds the values of the work tree's secret-bearing files
// (.env, keys, credentials: the paths the tools refuse), for the check the
// gitleaks rules cannot make: output that contains a value from one of
// them (`run cat .env` printing a short password no rule knows) is
// withheld. The files come from the workspace's index of hidden files
// (sandbox.Workspace.SecretFiles), which also answers whether a file is a
// hard link to one of them; the values are derived again whenever that
// index was rebuilt, which it is after a command ran (invalidate).
type secretFiles struct {
	src secretSource // the workspace; nil disables the check
	mu  sync.Mutex
	gen uint64
	// values are the secret-looking values of those files, longest
	// first, so that a finding names the longest value that matched.
	values []string
}

// secretSource is what sandbox.Workspace offers for the check.
type secretSource interface {
	SecretFiles() ([]sandbox.SecretFile, uint64, error)
	Changed()
}

func newSecretFiles(fsys files) *secretFiles {
	src, _ := fsys.(secretSource)
	return &secretFiles{src: src}
}

// invalidate tells the workspace that a command may have changed the
// tree (made links, written secret files).
func (l *secretFiles) invalidate() {
	if l.src != nil {
		l.src.Changed()
	}
}

// find returns the 1-based lines of text that hold a value of a secret
// file, at most one per value.
func (l *secretFiles) find(ctx context.Context, text string) ([]int, error) {
	if text == "" || l.src == nil {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	values, err := l.current()
	if err != nil {
		return nil, err
	}
	var lines []int
	for _, v := range values {
		if i := strings.Index(text, v); i >= 0 {
			lines = append(lines, strings.Count(text[:i], "\n")+1)
		}
	}
	return lines, nil
}

// current returns the values, derived again if the index was rebuilt.
func (l *secretFiles) current() ([]string, error) {
	files, gen, err := l.src.SecretFiles()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if gen != l.gen {
		l.values, l.gen = valuesOf(files), gen
	}
	return l.values, nil
}

// valuesOf picks the values worth looking for in output from the secret
// files, longest first, each once; templates are left out.
func valuesOf(files []sandbox.SecretFile) []string {
	seen := map[string]bool{}
	var values []string
	for _, f := range files {
		if isTemplate(f.Path) {
			continue // placeholders, which documentation repeats
		}
		for _, v := range secretValues(f.Data) {
			if !seen[v] {
				seen[v] = true
				values = append(values, v)
			}
		}
	}
	// Longest first: a finding then names the most specific value.
	slices.SortStableFunc(values, func(a, b string) int { return len(b) - len(a) })
	return values
}

// indexSecretFiles builds the index of dir from scratch and returns the
// number of secret files and their values: the work one run or verify
// call costs (BenchmarkSecretIndex).
func indexSecretFiles(_ context.Context, dir string) (int, []string, error) {
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		return 0, nil, err
	}
	defer ws.Close()
	files, _, err := ws.SecretFiles()
	return len(files), valuesOf(files), err
}

// isTemplate: a secret file's template by the usual names
// (.env.example, .env.sample, credentials.template, …), whose values are
// placeholders the README repeats, not secrets.
func isTemplate(p string) bool {
	for _, suffix := range []string{".example", ".sample", ".template", ".dist", ".tmpl"} {
		if strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

// secretValues picks the values of a secret file worth looking for in
// output: of each line, the value after KEY= or KEY: (dotenv, YAML,
// INI, .netrc's "password x" too by its last field), kept when it looks
// like a secret rather than a setting: at least 8 bytes, not only
// lowercase letters ("development"), and varied enough (Shannon entropy
// of at least 3 bits a byte; "eu-west-1" has 2.7).
func secretValues(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), sandbox.MaxSecretFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-----") {
			continue
		}
		v := line
		if i := strings.IndexAny(line, "=:"); i >= 0 {
			v = line[i+1:]
		} else if f := strings.Fields(line); len(f) > 1 {
			v = f[len(f)-1]
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if looksSecret(v) {
			out = append(out, v)
		}
	}
	return out
}

func looksSecret(v string) bool {
	if len(v) < 8 || strings.Trim(v, "abcdefghijklmnopqrstuvwxyz") == "" {
		return false
	}
	return entropy(v) >= 3
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// afterCommands marks the index stale once a tool that runs commands
// returns.
func afterCommands[P any](s *Set, f func(context.Context, P) (Result, error)) func(context.Context, P) (Result, error) {
	return func(ctx context.Context, p P) (Result, error) {
		defer s.links.invalidate()
		return f(ctx, p)
	}
}
