package testsrc

import (
	"path"
	"strings"
)

// Hook is code that runs around a package's or a session's tests and can
// decide whether they run at all: Go's TestMain(*testing.M) and a test
// file's init functions, pytest's hook functions and pytest_plugins in a
// conftest.py.
type Hook struct {
	// Name is the function's name ("TestMain", "init",
	// "pytest_collection_modifyitems") or "pytest_plugins".
	Name string
	Line int
	// Text is its source with comments blanked, to tell a changed hook.
	Text string
}

// Hooks returns the hooks a file declares, in source order; none for a
// file that does not build or is not read (as Tests).
func Hooks(p string, src []byte) []Hook {
	switch {
	case src == nil:
		return nil
	case path.Ext(p) == ".go":
		if !IsTestPath(p) || IsTestData(p) || Excluded(p, src) != "" {
			return nil
		}
		return goHooks(p, src)
	case path.Base(p) == "conftest.py":
		return conftestHooks(src)
	}
	return nil
}

// conftestHooks are a conftest.py's module-level pytest_* functions, which
// pytest calls as hooks, and its pytest_plugins, which loads plugins that
// may define more.
func conftestHooks(src []byte) []Hook {
	tree := parse(pyGrammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	src = blankComments(tree.RootNode(), src)
	var out []Hook
	for _, c := range children(tree.RootNode()) {
		def := c
		if c.Type() == "decorated_definition" {
			def = c.ChildByFieldName("definition")
		}
		if def == nil {
			continue
		}
		name := ""
		switch def.Type() {
		case "function_definition":
			name = text(def.ChildByFieldName("name"), src)
		case "expression_statement":
			if e := def.NamedChild(0); e != nil && e.Type() == "assignment" {
				name = text(e.ChildByFieldName("left"), src)
			}
		}
		if strings.HasPrefix(name, "pytest_") {
			out = append(out, Hook{Name: name, Line: line(c), Text: text(c, src)})
		}
	}
	return out
}
