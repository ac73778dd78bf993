package testsrc

import (
	"bytes"
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// Hook is code that runs around a package's or a session's tests and can
// decide whether they run at all: Go's TestMain(*testing.M) and a test
// file's init functions, pytest's hook functions and pytest_plugins in a
// conftest.py, and the options of a Jest or Vitest configuration that
// name such code (setup files, global setup, runner, reporters).
type Hook struct {
	// Name is the function's name ("TestMain", "init",
	// "pytest_collection_modifyitems"), "pytest_plugins", or the
	// configuration option ("setupFiles").
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
	case path.Base(p) == "package.json":
		return packageJSONHooks(src)
	case isJSRunnerConfig(path.Base(p)):
		return jsConfigHooks(p, src)
	}
	return nil
}

// jsHookKeys are the Jest and Vitest options that name code run around
// the tests (setup files, global setup, environments, runners, reporters)
// rather than choosing which tests run. The test environment is left out:
// it is nearly always a built-in name (node, jsdom).
var jsHookKeys = map[string]bool{
	"setupFiles": true, "setupFilesAfterEnv": true, "globalSetup": true, "globalTeardown": true,
	"testRunner": true, "runner": true, "reporters": true, "testSequencer": true, "snapshotResolver": true,
}

// isJSRunnerConfig: jest.config.js, vitest.config.ts and their kin.
func isJSRunnerConfig(base string) bool {
	for _, prefix := range []string{"jest.config.", "vitest.config.", "vitest.workspace."} {
		if strings.HasPrefix(base, prefix) && readerOf(base) != nil {
			return true
		}
	}
	return false
}

// jsConfigHooks are the hook options set anywhere in a Jest or Vitest
// configuration module, as `key: value` pairs.
func jsConfigHooks(p string, src []byte) []Hook {
	grammar := jsGrammar
	switch path.Ext(p) {
	case ".ts", ".mts", ".cts":
		grammar = tsGrammar
	}
	tree := parse(grammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	src = blankComments(tree.RootNode(), src)
	var out []Hook
	walk(tree.RootNode(), func(n *sitter.Node) bool {
		if n.Type() == "pair" {
			if k := strings.Trim(text(n.ChildByFieldName("key"), src), `'"`); jsHookKeys[k] {
				out = append(out, Hook{Name: k, Line: line(n), Text: text(n, src)})
			}
		}
		return true
	})
	return out
}

// packageJSONHooks are the hook options of package.json's "jest" object.
func packageJSONHooks(src []byte) []Hook {
	var pkg struct {
		Jest map[string]json.RawMessage `json:"jest"`
	}
	if json.Unmarshal(src, &pkg) != nil {
		return nil
	}
	var out []Hook
	for _, k := range slices.Sorted(maps.Keys(pkg.Jest)) {
		if jsHookKeys[k] {
			out = append(out, Hook{Name: k, Line: lineOf(src, `"`+k+`"`), Text: string(pkg.Jest[k])})
		}
	}
	return out
}

// lineOf is the 1-based line of the first occurrence of s, or 0.
func lineOf(src []byte, s string) int {
	i := bytes.Index(src, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(src[:i], []byte("\n")) + 1
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
