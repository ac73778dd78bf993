package pipeline

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/verify/findings"
)

// KindCommandOutput is the finding on what the model's commands left in
// the tree and the commit leaves out (docs/design.md §4.5): a build,
// cache or coverage output, or a binary, of a kind the repository does
// not track.
const KindCommandOutput = "command_output"

// fileTools are the tools whose "path" argument is a file the model
// wrote itself: what they write is the model's change, whatever its kind.
var fileTools = []string{"write_file", "edit"}

// outputDirs are directories that only tools write: caches, dependency
// installs, and build and coverage output.
var outputDirs = []string{
	"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", ".eggs", ".venv",
	"node_modules", ".nyc_output", "coverage", "htmlcov", ".phpunit.cache", ".gradle", "target", "build", "dist", "CMakeFiles",
}

// outputExts are extensions of compiled objects, libraries and coverage
// data; outputNames whole names of caches and reports.
var (
	outputExts  = []string{".pyc", ".pyo", ".o", ".obj", ".a", ".so", ".dylib", ".dll", ".exe", ".class", ".gcda", ".gcno", ".gcov"}
	outputNames = []string{".phpunit.result.cache", ".coverage", "coverage.xml", "lcov.info", "CMakeCache.txt", ".DS_Store"}
)

// tracked is what the base commit holds, by kind: the extensions and
// names of its files, every directory that holds one, and whether it
// holds an extensionless binary (asked only when needed).
type tracked struct {
	exts, names, dirs map[string]bool
	extlessBinary     func() bool
}

// newTracked reads the kinds of the base commit's paths; binary, which
// says whether any of the given paths is a binary of the base, answers
// extlessBinary, once.
func newTracked(paths []string, binary func([]string) bool) tracked {
	t := tracked{exts: map[string]bool{}, names: map[string]bool{}, dirs: map[string]bool{}}
	var extless []string
	for _, p := range paths {
		base := path.Base(p)
		t.names[base] = true
		if ext := strings.ToLower(path.Ext(base)); ext != "" && ext != base {
			t.exts[ext] = true
		} else {
			extless = append(extless, p)
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			t.dirs[d] = true
		}
	}
	var known, answer bool
	t.extlessBinary = func() bool {
		if !known {
			known, answer = true, binary(extless)
		}
		return answer
	}
	return t
}

// commandOutput says why a file a command added is an output the commit
// leaves out, or "" when it stays: it lies in an output directory the
// base commit holds nothing in, or its name is an output's, or it is a
// binary, and the base commit tracks no file of that kind (the same
// extension or name; a binary without extension when the file has none).
// It never looks at who wrote the file: the caller asks only of files no
// file tool wrote.
func commandOutput(p string, binary bool, t tracked) string {
	if dir := outputDirOf(p); dir != "" {
		if t.dirs[dir] {
			return ""
		}
		return fmt.Sprintf("`%s/` is a build, cache or dependency directory, and the repository tracks nothing in it", path.Base(dir))
	}
	base := path.Base(p)
	ext := strings.ToLower(path.Ext(base))
	if ext == base {
		ext = ""
	}
	switch {
	case t.names[base] || (ext != "" && t.exts[ext]):
		return ""
	case slices.Contains(outputNames, base):
		return fmt.Sprintf("`%s` is a tool's cache or report, and the repository tracks none", base)
	case ext != "" && slices.Contains(outputExts, ext):
		return fmt.Sprintf("`%s` files are compiled or coverage output, and the repository tracks none", ext)
	case binary && ext != "":
		return fmt.Sprintf("it is binary, and the repository tracks no `%s` files", ext)
	case binary && !t.extlessBinary():
		return "it is binary (an executable, as a build leaves), and the repository tracks no binary without an extension"
	}
	return ""
}

// setupEnvChange says why a change inside a virtualenv directory that
// the base commit tracks nothing in is left out, whatever its kind and
// whoever made it, or "" for any other path. Setup made that directory
// in the pristine tree and the checks run its interpreter
// (.venv/bin/python): a file the model added, changed or deleted there
// would reach the final checks as a trusted tool, and the commit as the
// model's work.
func setupEnvChange(p string, t tracked) string {
	dir := outputDirOf(p)
	if path.Base(dir) != ".venv" || t.dirs[dir] {
		return ""
	}
	return fmt.Sprintf("`%s/` is the environment setup made, which the checks run from, and the repository tracks nothing in it", path.Base(dir))
}

// toolWritten are the paths the model's file tools wrote, from the
// ledger, cleaned as the change lists them.
func (r *run) toolWritten() map[string]bool {
	out := map[string]bool{}
	for _, rec := range r.ledger.Records() {
		if rec.Type != ledger.TypeToolCall {
			continue
		}
		var call ledger.ToolCall
		if rec.Decode(&call) != nil || !slices.Contains(fileTools, call.Tool) {
			continue
		}
		var args struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(call.Arguments), &args) == nil && args.Path != "" {
			out[path.Clean(strings.TrimPrefix(args.Path, "/"))] = true
		}
	}
	return out
}

// dropCommandOutputs takes out of the change list the files the model's
// commands added that commandOutput calls outputs, with one finding per
// output directory or file. A file a file tool wrote, and any change to
// a tracked path, stays.
func (r *run) dropCommandOutputs() error {
	base, err := r.repo.BasePaths()
	if err != nil {
		return err
	}
	var binErr error
	t := newTracked(base, func(ps []string) bool {
		ok, err := r.repo.BaseHasBinary(ps)
		binErr = err
		return ok
	})
	written := r.toolWritten()
	var out []leftOut
	index := map[string]int{}
	kept := r.fin.changes[:0]
	for _, c := range r.fin.changes {
		why, setup := setupEnvChange(c.Path, t), true
		if why == "" && c.Kind == gitrepo.Added && !written[c.Path] {
			why, setup = commandOutput(c.Path, c.Binary, t), false
		}
		if why == "" {
			kept = append(kept, c)
			continue
		}
		r.fin.dropped = append(r.fin.dropped, c)
		key, dir := c.Path, outputDirOf(c.Path)
		if dir != "" {
			key = dir + "/"
		}
		if i, ok := index[key]; ok {
			out[i].files++
			continue
		}
		index[key] = len(out)
		out = append(out, leftOut{path: key, why: why, files: 1, dir: dir != "", setup: setup})
	}
	r.fin.changes = kept
	for _, l := range out {
		r.fin.evidence = append(r.fin.evidence, l.finding())
	}
	return binErr
}

// leftOut is one output file, or one output directory's files, that the
// commit leaves out.
type leftOut struct {
	path, why string
	files     int
	dir       bool
	// setup: setupEnvChange left it out, whoever wrote it.
	setup bool
}

func (l leftOut) finding() findings.Finding {
	what := "This file"
	switch {
	case l.dir && l.files == 1:
		what = "1 file here"
	case l.dir:
		what = fmt.Sprintf("%d files here", l.files)
	}
	by := ", made by the model's commands rather than its file tools,"
	if l.setup {
		by = ", added, changed or deleted by the model,"
	}
	return findings.Finding{Kind: KindCommandOutput, Path: l.path,
		Detail: what + by + " was left out of the commit and of the final checks: " + l.why + "."}
}

// outputDirOf is the outermost output directory p lies in, or "".
func outputDirOf(p string) string {
	parts := strings.Split(p, "/")
	for i, d := range parts[:len(parts)-1] {
		if slices.Contains(outputDirs, d) || strings.HasSuffix(d, ".egg-info") {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return ""
}
