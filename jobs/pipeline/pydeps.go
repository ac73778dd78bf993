package pipeline

import (
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// testGroups are the names under which Python projects declare what their
// tests need, as optional-dependencies extras (`pip install .[test]`) or
// PEP 735 dependency groups.
var testGroups = []string{"test", "tests", "testing", "dev"}

// pyTestRequirements are the requirement strings pyproject.toml src
// declares for its tests: its test and dev extras and dependency groups
// (strings only; an include-group table is followed one level), then
// side, those the project declares elsewhere (pySideRequirements), each
// once, in order. Entries pip could read as an option or a local path
// (starting "-", "." or "/", or a file: URL) are left out: this command
// runs with the setup network, and a local path would build the tree's
// code.
func pyTestRequirements(src []byte, side ...string) []string {
	var doc struct {
		Project struct {
			Extras map[string][]string `toml:"optional-dependencies"`
		} `toml:"project"`
		Groups map[string][]any `toml:"dependency-groups"`
	}
	if toml.Unmarshal(src, &doc) != nil {
		doc.Project.Extras, doc.Groups = nil, nil
	}
	var out []string
	add := func(req string) {
		req = strings.TrimSpace(req)
		if req == "" || strings.ContainsAny(req[:1], "-./") || strings.Contains(req, "file:") || slices.Contains(out, req) {
			return
		}
		out = append(out, req)
	}
	for _, g := range testGroups {
		for _, req := range doc.Project.Extras[g] {
			add(req)
		}
		for _, e := range doc.Groups[g] {
			switch v := e.(type) {
			case string:
				add(v)
			case map[string]any:
				inc, _ := v["include-group"].(string)
				for _, e := range doc.Groups[inc] {
					if s, ok := e.(string); ok {
						add(s)
					}
				}
			}
		}
	}
	for _, req := range side {
		add(req)
	}
	return out
}

// pyprojectInstall is the detected command for pyproject.toml src: its
// test requirements (pyTestRequirements) first, into the .venv the checks
// run with, then the project itself as before. The test requirements come
// first so that a project whose build backend cannot be fetched still has
// what its tests import.
func pyprojectInstall(src []byte, side ...string) string {
	reqs := pyTestRequirements(src, side...)
	if len(reqs) == 0 {
		return pipInstall + "-e ."
	}
	quoted := make([]string, len(reqs))
	for i, r := range reqs {
		quoted[i] = shellQuote(r)
	}
	// Its own --report file: pipSources reads both.
	first := strings.Replace(pipInstall, "-$$.json", "-$$-test.json", 1)
	return first + strings.Join(quoted, " ") + " && " + pipInstall + "-e ."
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
