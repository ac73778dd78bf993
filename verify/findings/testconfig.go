package findings

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	sitter "github.com/smacker/go-tree-sitter"
	"go.yaml.in/yaml/v3"
	"gopkg.in/ini.v1"
)

// TestNames are the tests one run of a check executed. Known is set when
// the runner named every test it ran (go test -json, JUnit XML) and the
// run passed; otherwise nothing is compared.
type TestNames struct {
	Known bool
	Names []string
}

// checkFindings reports checks that ran nothing, checks that no longer
// run a test that ran at baseline (a test the change renamed or moved is
// followed to its new name through pairs), and checks whose command at
// the end is not the one that ran at baseline.
func checkFindings(checks []Check, pairs []pair) []Finding {
	var out []Finding
	for _, c := range checks {
		switch {
		case c.ZeroTests:
			out = append(out, Finding{Kind: NoTestsRan, Detail: fmt.Sprintf(
				"The final %q check (`%s`) passed but ran no test, so its pass says nothing about the change.", c.Name, oneLineCode(c.Final))})
		case c.Baseline != "" && c.Final == "":
			out = append(out, Finding{Kind: TestSkipped, Detail: fmt.Sprintf(
				"The %q check (`%s`) ran at baseline but not at the end, so the final result leaves out what it checked.", c.Name, oneLineCode(c.Baseline))})
		case c.Baseline != "" && c.Final != c.Baseline:
			out = append(out, Finding{Kind: TestSkipped, Detail: fmt.Sprintf(
				"The %q check ran `%s` at baseline but `%s` at the end, so the final pass may cover less than the baseline did.", c.Name, oneLineCode(c.Baseline), oneLineCode(c.Final))})
		default:
			out = append(out, missingTestFindings(c, pairs)...)
		}
	}
	return out
}

// missingTestFindings reports the tests that ran at baseline and not in
// the final run of the same check: moved where the toolchain does not
// look, renamed for another system, skipped by a TestMain or a hook. The
// change's diff may not show why; the run does. A test renamed or moved
// by the change is missing only when its new name did not run either.
func missingTestFindings(c Check, pairs []pair) []Finding {
	if !c.BaselineRan.Known || !c.FinalRan.Known {
		return nil
	}
	final := make(map[string]bool, len(c.FinalRan.Names))
	for _, name := range c.FinalRan.Names {
		final[name] = true
	}
	var missing []string
	for _, name := range c.BaselineRan.Names {
		if !final[name] && !slices.ContainsFunc(pairs, func(p pair) bool { return final[followed(name, p)] }) {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	const shown = 3
	names := make([]string, 0, shown)
	for _, n := range missing[:min(shown, len(missing))] {
		names = append(names, "`"+oneLineCode(n)+"`")
	}
	list := strings.Join(names, ", ")
	if len(missing) > shown {
		list += fmt.Sprintf(" and %d more", len(missing)-shown)
	}
	return []Finding{{Kind: NoTestsRan, Detail: fmt.Sprintf(
		"The final %q check (`%s`) passed without running %s, which ran at baseline, so its pass says nothing about what they test.", c.Name, oneLineCode(c.Final), list)}}
}

// followed is the name under which a test that ran at baseline as name
// runs after p's rename or move: the test's own name, and its file where
// the runner names tests by file (a path or a dotted module), replaced by
// the new ones. It is name itself when p does not concern it.
func followed(name string, p pair) string {
	if p.base.tc.Short == p.next.tc.Short && p.base.path == p.next.path {
		return name
	}
	out, ok := replaceWord(name, p.base.tc.Short, p.next.tc.Short)
	if !ok {
		return name
	}
	if p.base.path != p.next.path {
		module := func(p string) string { return strings.ReplaceAll(strings.TrimSuffix(p, path.Ext(p)), "/", ".") }
		out = strings.Replace(out, p.base.path, p.next.path, 1)
		out, _ = replaceWord(out, module(p.base.path), module(p.next.path))
	}
	return out
}

// replaceWord replaces the last occurrence of old in s that stands as a
// whole word (not inside a longer identifier) with new.
func replaceWord(s, old, new string) (string, bool) {
	word := func(r byte) bool {
		return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}
	for end := len(s); old != ""; {
		i := strings.LastIndex(s[:end], old)
		if i < 0 {
			return s, false
		}
		j := i + len(old)
		if (i == 0 || !word(s[i-1])) && (j == len(s) || !word(s[j])) {
			return s[:i] + new + s[j:], true
		}
		end = i + len(old) - 1
	}
	return s, false
}

// settings are the values of the keys in one configuration file that
// decide which tests run, by key.
type settings map[string]string

// configFindings reports changes to test-runner configuration that can
// keep tests from being collected or run.
func configFindings(files []File) []Finding {
	var out []Finding
	for _, f := range files {
		if f.New == nil {
			continue // a deleted configuration runs the defaults: wider, not narrower
		}
		base := path.Base(f.Path)
		var read func([]byte) settings
		switch {
		case base == "package.json":
			read = packageJSONSettings
		case isJSRunnerConfig(base):
			read = jsRunnerSettings(path.Ext(base))
		case base == "pytest.ini", base == "tox.ini", base == "setup.cfg":
			read = pytestINISettings
		case base == "pyproject.toml":
			read = pyprojectSettings
		case base == "Cargo.toml":
			read = cargoSettings
		case base == "pom.xml":
			read = pomSettings
		case base == "conftest.py":
			out = append(out, conftestFindings(f)...)
			continue
		default:
			continue
		}
		out = append(out, settingFindings(f, read(f.Base), read(f.New))...)
	}
	return out
}

// settingFindings reports keys that were added or changed. A removed key
// falls back to the runner's default, which collects more, not less.
func settingFindings(f File, before, after settings) []Finding {
	var out []Finding
	for _, k := range slices.Sorted(maps.Keys(after)) {
		was, had := before[k]
		if had && was == after[k] {
			continue
		}
		detail := fmt.Sprintf("The test setting `%s` in %s changed from `%s` to `%s`", k, f.Path, oneLineCode(was), oneLineCode(after[k]))
		if !had {
			detail = fmt.Sprintf("The test setting `%s` in %s is now `%s`", k, f.Path, oneLineCode(after[k]))
		}
		out = append(out, Finding{Kind: TestSkipped, Path: f.Path, Line: lineOfWord(f.New, k[strings.LastIndexByte(k, '/')+1:]),
			Detail: detail + "; it decides which tests run, so the final pass may cover fewer tests than the baseline did."})
	}
	return out
}

// lineOfWord returns the first line holding word as a whole word, or 0.
func lineOfWord(src []byte, word string) int {
	if word == "" {
		return 0
	}
	re := regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(word) + `($|[^\w-])`)
	n := 0
	for l := range strings.Lines(string(src)) {
		n++
		if re.MatchString(l) {
			return n
		}
	}
	return 0
}

func packageJSONSettings(src []byte) settings {
	var pkg map[string]json.RawMessage
	if json.Unmarshal(src, &pkg) != nil {
		return nil
	}
	out := settings{}
	var scripts map[string]string
	_ = json.Unmarshal(pkg["scripts"], &scripts)
	for name, s := range scripts {
		if strings.Contains(name, "test") {
			out["scripts/"+name] = s
		}
	}
	for _, k := range []string{"jest", "mocha", "ava", "vitest"} {
		if raw, ok := pkg[k]; ok {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				out[k] = b.String()
			}
		}
	}
	return out
}

var jsRunnerPrefixes = []string{"jest.config.", "vitest.config.", "vitest.workspace.", ".mocharc", "karma.conf.", "ava.config.", "playwright.config.", "cypress.config."}

func isJSRunnerConfig(base string) bool {
	for _, p := range jsRunnerPrefixes {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// jsRunnerKeys are the options of Jest, Vitest, Mocha, Karma, AVA,
// Playwright and Cypress that choose or exclude tests.
var jsRunnerKeys = map[string]bool{
	"testMatch": true, "testRegex": true, "testPathIgnorePatterns": true, "testPathPattern": true, "testNamePattern": true,
	"roots": true, "modulePathIgnorePatterns": true, "projects": true, "include": true, "exclude": true, "spec": true,
	"specPattern": true, "excludeSpecPattern": true, "ignore": true, "grep": true, "fgrep": true, "invert": true,
	"testIgnore": true, "testDir": true, "files": true, "passWithNoTests": true, "bail": true, "only": true,
}

func jsRunnerSettings(ext string) func([]byte) settings {
	switch ext {
	case ".json", ".jsonc":
		return func(src []byte) settings { return mapSettings(json.Unmarshal, src) }
	case ".yml", ".yaml":
		return func(src []byte) settings { return mapSettings(yaml.Unmarshal, src) }
	}
	grammar := jsGrammar
	if ext == ".ts" || ext == ".mts" || ext == ".cts" {
		grammar = tsGrammar
	}
	return func(src []byte) settings { return jsPairs(grammar, src) }
}

// mapSettings reads the runner keys at the top of a JSON or YAML file.
func mapSettings(unmarshal func([]byte, any) error, src []byte) settings {
	var m map[string]any
	if src == nil || unmarshal(src, &m) != nil {
		return nil
	}
	out := settings{}
	for k, v := range m {
		if jsRunnerKeys[k] {
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	}
	return out
}

// jsPairs reads `key: value` pairs of the runner keys anywhere in a
// JavaScript or TypeScript configuration module.
func jsPairs(grammar func() *sitter.Language, src []byte) settings {
	if src == nil {
		return nil
	}
	tree := parse(grammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	out := settings{}
	walk(tree.RootNode(), func(n *sitter.Node) bool {
		if n.Type() == "pair" {
			k := strings.Trim(text(n.ChildByFieldName("key"), src), `'"`)
			if jsRunnerKeys[k] {
				v := squash(text(n.ChildByFieldName("value"), src))
				if prev, ok := out[k]; ok {
					v = prev + "; " + v
				}
				out[k] = v
			}
		}
		return true
	})
	return out
}

// pytestKeys are pytest's ini options that choose, exclude or excuse tests.
var pytestKeys = []string{"addopts", "testpaths", "python_files", "python_classes", "python_functions", "norecursedirs", "xfail_strict", "empty_parameter_set_mark"}

func pytestINISettings(src []byte) settings {
	if src == nil {
		return nil
	}
	f, err := ini.LoadSources(ini.LoadOptions{AllowPythonMultilineValues: true, SkipUnrecognizableLines: true, IgnoreInlineComment: true}, src)
	if err != nil {
		return nil
	}
	out := settings{}
	for _, name := range []string{"pytest", "tool:pytest"} {
		s, err := f.GetSection(name)
		if err != nil {
			continue
		}
		for _, k := range pytestKeys {
			if s.HasKey(k) {
				out[name+"/"+k] = squash(s.Key(k).String())
			}
		}
	}
	return out
}

func pyprojectSettings(src []byte) settings {
	var doc struct {
		Tool struct {
			Pytest struct {
				Options map[string]any `toml:"ini_options"`
			} `toml:"pytest"`
		} `toml:"tool"`
	}
	if src == nil || toml.Unmarshal(src, &doc) != nil {
		return nil
	}
	out := settings{}
	for _, k := range pytestKeys {
		if v, ok := doc.Tool.Pytest.Options[k]; ok {
			b, _ := json.Marshal(v)
			out["tool.pytest.ini_options/"+k] = string(b)
		}
	}
	return out
}

var conftestHooks = regexp.MustCompile(`\b(collect_ignore|collect_ignore_glob|pytest_collection_modifyitems|pytest_ignore_collect|pytest_deselected|pytest_runtest_setup)\b|\bskip`)

// conftestFindings reports lines added to a conftest.py that drop tests
// from collection or skip them.
func conftestFindings(f File) []Finding {
	for _, op := range lineDiff(string(f.Base), string(f.New)) {
		if op.Op == '+' && conftestHooks.MatchString(op.Text) && !strings.HasPrefix(strings.TrimSpace(op.Text), "#") {
			return []Finding{{Kind: TestSkipped, Path: f.Path, Line: op.NewLine, Detail: fmt.Sprintf(
				"%s now has `%s`, which can keep tests from being collected or run, so the final pass may cover fewer tests than the baseline did.", f.Path, oneLineCode(op.Text))}}
		}
	}
	return nil
}

func cargoSettings(src []byte) settings {
	var doc struct {
		Package map[string]any   `toml:"package"`
		Lib     map[string]any   `toml:"lib"`
		Test    []map[string]any `toml:"test"`
		Bin     []map[string]any `toml:"bin"`
	}
	if src == nil || toml.Unmarshal(src, &doc) != nil {
		return nil
	}
	out := settings{}
	put := func(k string, v any, ok bool) {
		if ok {
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	}
	v, ok := doc.Package["autotests"]
	put("package/autotests", v, ok)
	for _, k := range []string{"test", "doctest", "harness"} {
		v, ok := doc.Lib[k]
		put("lib/"+k, v, ok)
	}
	put("test", doc.Test, len(doc.Test) > 0)
	for _, b := range doc.Bin {
		v, ok := b["test"]
		put(fmt.Sprintf("bin/%v/test", b["name"]), v, ok)
	}
	return out
}

// xnode is one element of an XML document.
type xnode struct {
	name string
	line int
	text string
	kids []*xnode
}

func (n *xnode) child(name string) string {
	for _, k := range n.kids {
		if k.name == name {
			return k.text
		}
	}
	return ""
}

// inner returns the element's text and its descendants', squashed.
func (n *xnode) inner() string {
	var parts []string
	if n.text != "" {
		parts = append(parts, n.text)
	}
	for _, k := range n.kids {
		parts = append(parts, k.name+"="+k.inner())
	}
	return squash(strings.Join(parts, ", "))
}

func parseXML(src []byte) *xnode {
	d := xml.NewDecoder(bytes.NewReader(src))
	root := &xnode{}
	stack := []*xnode{root}
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			line, _ := d.InputPos()
			n := &xnode{name: t.Name.Local, line: line}
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			top.text += strings.TrimSpace(string(t))
		}
	}
	return root
}

// pomProperties and pomOptions choose or skip tests in Maven: the
// properties anywhere, the options in Surefire's and Failsafe's
// configuration.
var (
	pomProperties = map[string]bool{"skipTests": true, "maven.test.skip": true, "skipITs": true, "maven.test.failure.ignore": true, "test": true, "groups": true, "excludedGroups": true, "surefire.failIfNoSpecifiedTests": true}
	pomOptions    = map[string]bool{"skip": true, "skipTests": true, "skipITs": true, "testFailureIgnore": true, "excludes": true, "includes": true, "test": true, "groups": true, "excludedGroups": true, "testSourceDirectory": true, "failIfNoTests": true, "failIfNoSpecifiedTests": true, "skipExec": true}
)

func pomSettings(src []byte) settings {
	if src == nil {
		return nil
	}
	out := settings{}
	var visit func(n *xnode)
	visit = func(n *xnode) {
		switch {
		case n.name == "properties":
			for _, p := range n.kids {
				if pomProperties[p.name] {
					out["properties/"+p.name] = p.inner()
				}
			}
			return
		case n.name == "plugin" && (strings.Contains(n.child("artifactId"), "surefire") || strings.Contains(n.child("artifactId"), "failsafe")):
			var opts func(prefix string, c *xnode)
			opts = func(prefix string, c *xnode) {
				for _, k := range c.kids {
					switch {
					case pomOptions[k.name]:
						out[prefix+k.name] = k.inner()
					case k.name == "configuration" || k.name == "executions" || k.name == "execution":
						opts(prefix+k.name+"/", k)
					}
				}
			}
			opts(n.child("artifactId")+"/", n)
			return
		}
		for _, k := range n.kids {
			visit(k)
		}
	}
	visit(parseXML(src))
	return out
}
