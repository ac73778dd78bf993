package verify

import (
	"path"
	"slices"
	"strings"
)

// Coverage says which detected checks cover a change's files, so a
// report on a monorepo can say that a change to web/ was tested by
// `test (web: npm)` and not by the Go checks.
type Coverage struct {
	// ByPath maps each changed path to the checks covering it, in
	// detection order; a path no project contains maps to nothing.
	ByPath map[string][]string
	// Checks are the covering checks, each once, in detection order.
	Checks []string
	// Uncovered lists the changed paths no detected project contains.
	Uncovered []string
	// Untouched lists the projects (by directory) the change did not
	// touch, whose checks ran but say nothing about the change.
	Untouched []string
}

// langByExt maps source extensions to the language whose projects cover
// them, even when a project of another language is nearer: a .go file in
// a JavaScript package's directory belongs to the Go module above it.
var langByExt = map[string]string{
	".go": "go",
	".js": "node", ".mjs": "node", ".cjs": "node", ".jsx": "node", ".ts": "node", ".tsx": "node",
	".mts": "node", ".cts": "node", ".vue": "node", ".svelte": "node",
	".py": "python", ".pyi": "python",
	".rs":   "rust",
	".java": "java", ".kt": "java", ".scala": "java",
}

// Cover maps changed paths (relative to the repository root, slash form)
// to the checks of the innermost project containing each, preferring a
// project of the file's own language.
func (d Detection) Cover(changed []string) Coverage {
	cov := Coverage{ByPath: map[string][]string{}}
	touched := map[string]bool{}
	for _, p := range changed {
		var names []string
		for _, proj := range d.owners(p) {
			touched[proj.Dir+"\x00"+proj.Language] = true
			names = append(names, proj.Checks...)
		}
		cov.ByPath[p] = names
		if len(names) == 0 {
			cov.Uncovered = append(cov.Uncovered, p)
		}
	}
	for _, c := range d.Checks {
		for _, names := range cov.ByPath {
			if slices.Contains(names, c.Name) {
				cov.Checks = append(cov.Checks, c.Name)
				break
			}
		}
	}
	for _, proj := range d.Projects {
		if !touched[proj.Dir+"\x00"+proj.Language] && !slices.Contains(cov.Untouched, proj.Dir) {
			cov.Untouched = append(cov.Untouched, proj.Dir)
		}
	}
	return cov
}

// owners returns the projects whose checks cover p: those at the
// innermost directory containing p, among the projects of p's language
// when its extension names one (a .py file in a Go module is not covered
// by go test).
func (d Detection) owners(p string) []Project {
	var candidates []Project
	for _, proj := range d.Projects {
		if within(p, proj.Dir) {
			candidates = append(candidates, proj)
		}
	}
	if lang, ok := langByExt[strings.ToLower(path.Ext(p))]; ok {
		var same []Project
		for _, c := range candidates {
			if c.Language == lang {
				same = append(same, c)
			}
		}
		candidates = same // no project of its language: nothing tests it
	}
	deepest := -1
	for _, c := range candidates {
		deepest = max(deepest, depth(c.Dir))
	}
	var out []Project
	for _, c := range candidates {
		if depth(c.Dir) == deepest {
			out = append(out, c)
		}
	}
	return out
}

func depth(dir string) int {
	if dir == "." {
		return 0
	}
	return strings.Count(dir, "/") + 1
}
