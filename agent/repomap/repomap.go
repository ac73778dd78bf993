// Package repomap renders a compact map of a repository for the model: its
// files in lexical order, each source file followed by its top-level
// symbols, all within a token budget. Go is read with go/parser; Python,
// JavaScript and TypeScript with tree-sitter.
package repomap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/patchwright/patchwright/agent/ignore"
	"github.com/patchwright/patchwright/sandbox"
)

// Options tune Build. Each zero field takes the default in its comment.
type Options struct {
	// TokenBudget caps the map at about this many tokens (four bytes
	// each); default 2,000.
	TokenBudget int
	// MaxFileBytes: larger files are listed without symbols; default
	// 256 KiB.
	MaxFileBytes int64
	// MaxSymbols is the most symbols shown for one file; default 40.
	MaxSymbols int
}

// Defaults of Options.
const (
	DefaultTokenBudget  = 2000
	DefaultMaxFileBytes = 256 << 10
	DefaultMaxSymbols   = 40
)

// skipDirs are vendored, generated or tool directories whose contents say
// little about the code the issue is about. This is a choice of what is
// worth the map's budget, not of what the model may see: that is
// sandbox.Workspace.Visible's alone, and list_files shows these
// directories.
var skipDirs = map[string]bool{
	"vendor": true, "node_modules": true, "third_party": true, "__pycache__": true,
	".venv": true, "venv": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true,
	"dist": true, "build": true, "target": true, ".next": true, ".idea": true, ".vscode": true,
}

// Build walks the workspace and renders the map. Files are listed in
// lexical order; symbols are shown while the budget allows, then bare
// paths, then a note saying how many files were left out.
func Build(ctx context.Context, ws *sandbox.Workspace, opts Options) (string, error) {
	opts = opts.withDefaults()
	files, err := listFiles(ctx, ws)
	if err != nil {
		return "", err
	}
	budget := opts.TokenBudget * 4
	var b strings.Builder
	withSymbols := true
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		entry := f + "\n"
		if withSymbols {
			syms := fileSymbols(ctx, ws, f, opts)
			if full := entry + indent(syms); b.Len()+len(full) <= budget {
				b.WriteString(full)
				continue
			}
			// From here on, paths only: a later file's symbols are worth
			// less than knowing the rest of the tree exists.
			withSymbols = false
		}
		if b.Len()+len(entry) > budget {
			fmt.Fprintf(&b, "[map truncated: %d more files not shown; use list_files]\n", len(files)-i)
			break
		}
		b.WriteString(entry)
	}
	return b.String(), nil
}

func (o Options) withDefaults() Options {
	if o.TokenBudget <= 0 {
		o.TokenBudget = DefaultTokenBudget
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxSymbols <= 0 {
		o.MaxSymbols = DefaultMaxSymbols
	}
	return o
}

func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// listFiles returns the files of the workspace the model may see, in
// lexical order, without ignored or vendored ones. The workspace's walk
// applies the one visibility rule (sandbox.Workspace.WalkVisible): no
// .git, secret files, symbolic links, special files or hard links to
// hidden files.
func listFiles(ctx context.Context, ws *sandbox.Workspace) ([]string, error) {
	ig := ignore.New(ws.ReadFile)
	var files []string
	err := ws.WalkVisible(".", func(p string, d fs.DirEntry, err error) error {
		var hidden *sandbox.NotVisibleError
		if errors.As(err, &hidden) {
			return nil
		}
		if err != nil {
			// An unreadable directory is left out, not fatal: the map is
			// a guide, not an inventory.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == "." {
			return nil
		}
		if d.IsDir() {
			if skipDirs[d.Name()] || ig.Ignored(p, true) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !ig.Ignored(p, false) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk workspace: %w", err)
	}
	return files, nil
}
