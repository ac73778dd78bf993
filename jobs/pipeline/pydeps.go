package pipeline

import (
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify/findings"
)

// testGroups are the names under which Python projects declare what their
// tests need, as optional-dependencies extras (`pip install .[test]`) or
// PEP 735 dependency groups.
var testGroups = []string{"test", "tests", "testing", "dev"}

// pyGroup is one group of requirements a Python project declares for its
// tests, named as the project names it: File is the file ("tox.ini",
// relative to the project), Where the table and key ("[testenv] deps").
type pyGroup struct {
	File, Where string
	Reqs        []string
}

// pyTestGroups are the groups of test requirements the project in dir
// declares: pyproject.toml's test and dev extras and dependency groups
// (strings only; an include-group table is followed one level), then
// those it declares elsewhere (pySideGroups). Each requirement counts
// once, in its first group, and a group left with none is dropped.
// Entries pip could read as an option or a local path (starting "-",
// "." or "/", or a file: URL) are left out: these commands run with the
// setup network, and a local path would build the tree's code.
func pyTestGroups(read func(string) []byte, dir string) []pyGroup {
	pyproject := read(path.Join(dir, "pyproject.toml"))
	seen := map[string]bool{}
	var out []pyGroup
	for _, g := range append(pyprojectGroups(pyproject), pySideGroups(read, dir, pyproject)...) {
		var reqs []string
		for _, req := range g.Reqs {
			req = strings.TrimSpace(req)
			if req == "" || strings.ContainsAny(req[:1], "-./") || strings.Contains(req, "file:") || seen[req] {
				continue
			}
			seen[req] = true
			reqs = append(reqs, req)
		}
		if len(reqs) > 0 {
			out = append(out, pyGroup{File: g.File, Where: g.Where, Reqs: reqs})
		}
	}
	return out
}

// pyprojectGroups are pyproject.toml src's test and dev extras and
// dependency groups, in testGroups' order, extras first.
func pyprojectGroups(src []byte) []pyGroup {
	var doc struct {
		Project struct {
			Extras map[string][]string `toml:"optional-dependencies"`
		} `toml:"project"`
		Groups map[string][]any `toml:"dependency-groups"`
	}
	if toml.Unmarshal(src, &doc) != nil {
		return nil
	}
	var out []pyGroup
	for _, g := range testGroups {
		if reqs := doc.Project.Extras[g]; len(reqs) > 0 {
			out = append(out, pyGroup{File: "pyproject.toml", Where: "[project.optional-dependencies] " + g, Reqs: reqs})
		}
	}
	for _, g := range testGroups {
		var reqs []string
		for _, e := range doc.Groups[g] {
			switch v := e.(type) {
			case string:
				reqs = append(reqs, v)
			case map[string]any:
				inc, _ := v["include-group"].(string)
				for _, e := range doc.Groups[inc] {
					if s, ok := e.(string); ok {
						reqs = append(reqs, s)
					}
				}
			}
		}
		if len(reqs) > 0 {
			out = append(out, pyGroup{File: "pyproject.toml", Where: "[dependency-groups] " + g, Reqs: reqs})
		}
	}
	return out
}

// pyProjectFiles are the files that make a directory a Python project
// pip can install, in the order one is chosen.
var pyProjectFiles = []string{"pyproject.toml", "setup.py", "setup.cfg"}

// pyInstalls are the detected commands of the Python project whose
// project file is m (pyProjectFiles), each with what called for it: one
// pip install per group of test requirements (pyTestGroups), so a group
// that cannot be installed does not stop the others and the body can
// name it, then the project itself, editable, into the .venv the checks
// run with. The groups come first so that a project whose build backend
// cannot be fetched still has what its tests import. Commands and
// manifests are relative to m's directory.
func pyInstalls(read func(string) []byte, m string) []report.DetectedCommand {
	var out []report.DetectedCommand
	for _, g := range pyTestGroups(read, path.Dir(m)) {
		quoted := make([]string, len(g.Reqs))
		for i, r := range g.Reqs {
			quoted[i] = shellQuote(r)
		}
		out = append(out, report.DetectedCommand{Command: pipInstall + strings.Join(quoted, " "), Manifest: g.File, Group: g.Where})
	}
	return append(out, report.DetectedCommand{Command: pipInstall + "-e .", Manifest: path.Base(m)})
}

// setupDeclaresRE finds, in setup.py or setup.cfg, a keyword that
// declares what pip install . installs besides the project.
var setupDeclaresRE = regexp.MustCompile(`\b(?:install_requires|extras_require)\b`)

// pyDeclares reports whether the Python project file m (src its content)
// calls for a detected install: it declares dependencies
// (findings.DeclaresDependencies for pyproject.toml; install_requires
// or extras_require in setup.py or setup.cfg, which are not parsed:
// setup.py is a program), or the project declares test requirements
// (pyTestGroups).
func pyDeclares(read func(string) []byte, m string, src []byte) bool {
	if path.Base(m) == "pyproject.toml" && findings.DeclaresDependencies(m, src) {
		return true
	}
	if path.Base(m) != "pyproject.toml" && setupDeclaresRE.Match(src) {
		return true
	}
	return len(pyTestGroups(read, path.Dir(m))) > 0
}

// imagePytest are the project directories whose virtualenv in the tree
// dir (venvs, from virtualenvs) has no pytest package of its own: a
// pytest check there runs the image's, which the environment sees
// (pipInstall makes it with --system-site-packages), and says so.
func imagePytest(dir string, venvs map[string]string) map[string]bool {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	out := map[string]bool{}
	for proj, env := range venvs {
		if m, _ := fs.Glob(root.FS(), env+"/lib/python*/site-packages/pytest"); len(m) == 0 {
			out[proj] = true
		}
	}
	return out
}
