package tools

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/patchwright/patchwright/sandbox"
)

// secretFiles knows the secret-bearing files of the work tree (.env,
// keys, credentials: the paths the tools refuse), for two checks the
// gitleaks rules cannot make:
//
//   - a hard link to one of them under an innocent name (`ln .env
//     notes.txt`) is refused by read_file and left out of search;
//   - output that contains a value from one of them (`run cat .env`
//     printing a short password no rule knows) is withheld.
//
// The index is built when first needed and again after any command ran:
// only commands make links or files at secret paths, since the tools
// refuse those paths. A copy (`cp .env x`) is a new file with one link;
// only the value check and the scan protect it, and only while .env
// itself still exists.
type secretFiles struct {
	dir   string // the workspace root on the host; "" disables both checks
	mu    sync.Mutex
	stale bool
	links map[fileID]bool
	// values are the secret-looking values of those files, longest
	// first, so that a finding names the longest value that matched.
	values []string
}

type fileID struct{ dev, ino uint64 }

func newSecretFiles(fsys files) *secretFiles {
	l := &secretFiles{stale: true}
	if d, ok := fsys.(interface{ Dir() string }); ok {
		l.dir = d.Dir()
	}
	return l
}

// invalidate drops the index after a command, which may have made links.
func (l *secretFiles) invalidate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stale = true
}

// fresh rebuilds the index if a command may have changed the tree. The
// caller holds l.mu.
func (l *secretFiles) fresh(ctx context.Context) error {
	if !l.stale || l.dir == "" {
		return nil
	}
	links, values, err := indexSecretFiles(ctx, l.dir)
	if err != nil {
		return err
	}
	l.links, l.values, l.stale = links, values, false
	return nil
}

// isLink reports whether info, from an Lstat, is a regular file with other
// names, one of them secret-bearing. Most files have one link, which costs
// nothing more than the Lstat the caller made.
func (l *secretFiles) isLink(ctx context.Context, info fs.FileInfo) (bool, error) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || !info.Mode().IsRegular() || st.Nlink < 2 || l.dir == "" {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.fresh(ctx); err != nil {
		return false, err
	}
	return l.links[idOf(st)], nil
}

// hasLinks reports whether any secret-bearing file has more than one
// name. When none has, no file can be a link to one, and a search skips
// the per-file check.
func (l *secretFiles) hasLinks(ctx context.Context) (bool, error) {
	if l.dir == "" {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.fresh(ctx); err != nil {
		return false, err
	}
	return len(l.links) > 0, nil
}

// find returns the 1-based lines of text that hold a value of a secret
// file, at most one per value.
func (l *secretFiles) find(ctx context.Context, text string) ([]int, error) {
	if text == "" || l.dir == "" {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.fresh(ctx); err != nil {
		return nil, err
	}
	var lines []int
	for _, v := range l.values {
		if i := strings.Index(text, v); i >= 0 {
			lines = append(lines, strings.Count(text[:i], "\n")+1)
		}
	}
	return lines, nil
}

func idOf(st *syscall.Stat_t) fileID { return fileID{dev: uint64(st.Dev), ino: st.Ino} }

// skipDirs are not searched for secret files: dependency and build trees,
// large and not the repository's own. A link placed inside them is still
// found, since the check compares inodes with the secret files found
// elsewhere.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "target": true, ".venv": true, "venv": true, "__pycache__": true}

// maxSecretFile is the most read of one secret file for its values.
const maxSecretFile = 64 << 10

// indexSecretFiles walks the work tree through os.Root, so a symlink
// planted in it is never followed, and reads only the files at
// secret-bearing paths, without blocking on a FIFO.
func indexSecretFiles(ctx context.Context, dir string) (map[fileID]bool, []string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	links := map[fileID]bool{}
	seen := map[string]bool{}
	var values []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries hold nothing to index
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !sandbox.IsSecretPath(p) {
			return nil
		}
		data, st := readSecretFile(root, p)
		if st == nil {
			return nil
		}
		if st.Nlink > 1 {
			links[idOf(st)] = true
		}
		if isTemplate(p) {
			return nil // placeholders, which documentation repeats
		}
		for _, v := range secretValues(data) {
			if !seen[v] {
				seen[v] = true
				values = append(values, v)
			}
		}
		return nil
	})
	// Longest first: a finding then names the most specific value.
	slices.SortStableFunc(values, func(a, b string) int { return len(b) - len(a) })
	return links, values, err
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

// readSecretFile reads up to maxSecretFile bytes of a regular file, or
// nothing.
func readSecretFile(root *os.Root, p string) ([]byte, *syscall.Stat_t) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, nil
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxSecretFile))
	return data, st
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
	sc.Buffer(make([]byte, 0, 4096), maxSecretFile)
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
