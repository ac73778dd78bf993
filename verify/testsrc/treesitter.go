package testsrc

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// The grammars, as functions so each is built once, on first use.
var (
	pyGrammar   = python.GetLanguage
	jsGrammar   = javascript.GetLanguage
	tsGrammar   = typescript.GetLanguage
	tsxGrammar  = tsx.GetLanguage
	rustGrammar = rust.GetLanguage
	javaGrammar = java.GetLanguage
)

// parse returns a syntax tree; tree-sitter always returns one, with ERROR
// nodes where the source does not parse. The caller closes it.
func parse(grammar func() *sitter.Language, src []byte) *sitter.Tree {
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(grammar())
	// Without a cancellable context ParseCtx fails only when no language
	// is set.
	tree, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil {
		return nil
	}
	return tree
}

func text(n *sitter.Node, src []byte) string {
	if n == nil {
		return ""
	}
	return n.Content(src)
}

func line(n *sitter.Node) int { return int(n.StartPoint().Row) + 1 }

func children(n *sitter.Node) []*sitter.Node {
	out := make([]*sitter.Node, 0, n.NamedChildCount())
	for i := 0; i < int(n.NamedChildCount()); i++ {
		out = append(out, n.NamedChild(i))
	}
	return out
}

// walk calls fn on n and its descendants, depth first, while fn returns
// true for a node.
func walk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range children(n) {
		walk(c, fn)
	}
}

func isComment(n *sitter.Node) bool { return strings.Contains(n.Type(), "comment") }

// blankComments returns a copy of src with every comment turned to
// spaces, newlines kept, so a test's text can be compared without its
// comments while offsets and line numbers stay those of the file.
func blankComments(root *sitter.Node, src []byte) []byte {
	out := slices.Clone(src)
	walk(root, func(n *sitter.Node) bool {
		if isComment(n) {
			blank(out[n.StartByte():n.EndByte()])
			return false
		}
		return true
	})
	return out
}

// blank turns every byte but newlines to a space.
func blank(b []byte) {
	for i, c := range b {
		if c != '\n' {
			b[i] = ' '
		}
	}
}

// span is a byte range of source to leave out.
type span struct{ start, end uint32 }

// treeCode returns a comparison form of a file's code: comments and
// whitespace inside lines removed, blank lines dropped; for Python
// (indented) each line keeps its indentation, which is syntax there.
func treeCode(grammar func() *sitter.Language, indented bool) func(string, []byte) (string, bool) {
	return func(_ string, src []byte) (string, bool) {
		tree := parse(grammar, src)
		if tree == nil {
			return "", false
		}
		defer tree.Close()
		root := tree.RootNode()
		var drop []span
		walk(root, func(n *sitter.Node) bool {
			if isComment(n) {
				drop = append(drop, span{n.StartByte(), n.EndByte()})
				return false
			}
			return true
		})
		return normalizeCode(src, drop, indented), !root.HasError()
	}
}

// normalizeCode removes the dropped spans, then the whitespace inside each
// line.
func normalizeCode(src []byte, drop []span, indented bool) string {
	var kept strings.Builder
	at := uint32(0)
	for _, d := range drop {
		if d.start < at {
			continue
		}
		kept.Write(src[at:d.start])
		at = d.end
	}
	kept.Write(src[at:])
	var b strings.Builder
	for l := range strings.Lines(kept.String()) {
		body := strings.Join(strings.Fields(l), "")
		if body == "" {
			continue
		}
		if indented {
			b.WriteString(strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " \t"))))
		}
		b.WriteString(body)
		b.WriteByte('\n')
	}
	return b.String()
}

// --- Python (pytest, unittest) ---

var (
	pySkipDecorator = regexp.MustCompile(`\b(skip|skipif|skipIf|skipUnless|xfail|expectedFailure)\b`)
	pySkipCall      = regexp.MustCompile(`(^|\.)(skip|skipTest|xfail)$`)
	pySkip          = skipCall{"call", "function", pySkipCall}
)

// pyTests lists test* functions at module level and test* methods of
// classes, with skip decorators, pytestmark and skip calls; module and
// class markers apply to every test beneath them.
func pyTests(_ string, src []byte) []Test {
	tree := parse(pyGrammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	src = blankComments(tree.RootNode(), src)
	w := walker{src: src}
	w.pyBlock(tree.RootNode(), scope{marks: pyMarks(tree.RootNode(), src, nil)})
	return w.out
}

// pyMarks returns the markers a module or class body sets for all its
// tests: `pytestmark = pytest.mark.skip…` and a module-level pytest.skip().
func pyMarks(block *sitter.Node, src []byte, inherited []Marker) []Marker {
	out := append([]Marker(nil), inherited...)
	for _, c := range children(block) {
		if c.Type() != "expression_statement" || c.NamedChildCount() == 0 {
			continue
		}
		e := c.NamedChild(0)
		switch {
		case e.Type() == "assignment" && text(e.ChildByFieldName("left"), src) == "pytestmark" && pySkipDecorator.MatchString(text(e.ChildByFieldName("right"), src)):
			out = append(out, Marker{Text: text(c, src), Line: line(c)})
		case e.Type() == "call" && pySkipCall.MatchString(text(e.ChildByFieldName("function"), src)):
			out = append(out, Marker{Text: text(c, src), Line: line(c)})
		}
	}
	return out
}

func (w *walker) pyBlock(block *sitter.Node, sc scope) {
	src := w.src
	for _, c := range children(block) {
		def, decorated := c, []Marker(nil)
		if c.Type() == "decorated_definition" {
			def = c.ChildByFieldName("definition")
			for _, d := range children(c) {
				if d.Type() == "decorator" && pySkipDecorator.MatchString(text(d, src)) {
					decorated = append(decorated, Marker{Text: text(d, src), Line: line(d)})
				}
			}
		}
		if def == nil {
			continue
		}
		name := text(def.ChildByFieldName("name"), src)
		marks := append(append([]Marker(nil), sc.marks...), decorated...)
		switch def.Type() {
		case "function_definition":
			if !strings.HasPrefix(name, "test") {
				continue
			}
			marks = append(marks, callMarks(def.ChildByFieldName("body"), src, pySkip)...)
			w.out = append(w.out, nodeTest(c, c, src, Test{Name: sc.prefix + name, Short: name, Skips: marks}))
		case "class_definition":
			if body := def.ChildByFieldName("body"); body != nil && pyCollected(def, name) {
				w.pyBlock(body, scope{sc.prefix + name + ".", pyMarks(body, src, marks)})
			}
		}
	}
}

// pyCollected is pytest's rule for a class: a name beginning with Test,
// or a subclass (which may be unittest.TestCase, collected whatever its
// name).
func pyCollected(class *sitter.Node, name string) bool {
	return strings.HasPrefix(name, "Test") || class.ChildByFieldName("superclasses") != nil
}

// walker gathers the tests of one file's tree: src is the file (comments
// blanked), out the tests found so far.
type walker struct {
	src []byte
	out []Test
}

// scope is where a walk stands: the name the enclosing groups give a
// test (prefix) and the markers they pass down to every test inside.
type scope struct {
	prefix string
	marks  []Marker
}

// nodeTest completes t (its name, short name and markers) with the place
// and text of the nodes where it starts and ends.
func nodeTest(first, last *sitter.Node, src []byte, t Test) Test {
	t.Kind, t.Line = KindTest, line(first)
	t.Start, t.End = int(first.StartByte()), int(last.EndByte())
	t.Text = string(src[first.StartByte():last.EndByte()])
	return t
}

// skipCall is a language's call that skips or assumes inside a test:
// nodes of type node whose callee (field) matches re.
type skipCall struct {
	node, field string
	re          *regexp.Regexp
}

// callMarks finds the skip calls c describes in body.
func callMarks(body *sitter.Node, src []byte, c skipCall) []Marker {
	var out []Marker
	walk(body, func(n *sitter.Node) bool {
		if n.Type() == c.node && c.re.MatchString(text(n.ChildByFieldName(c.field), src)) {
			out = append(out, Marker{Text: text(n, src), Line: line(n)})
		}
		return true
	})
	return out
}

// --- JavaScript and TypeScript (Jest, Vitest, Mocha, Jasmine, node:test) ---

// jsRole is what a call such as it(), describe.skip() or xit() declares.
type jsRole struct {
	test, group, skip, only bool
}

var jsRoots = map[string]jsRole{
	"it": {test: true}, "test": {test: true}, "specify": {test: true},
	"xit": {test: true, skip: true}, "xtest": {test: true, skip: true}, "xspecify": {test: true, skip: true},
	"fit":      {test: true, only: true},
	"describe": {group: true}, "context": {group: true}, "suite": {group: true},
	"xdescribe": {group: true, skip: true}, "xcontext": {group: true, skip: true},
	"fdescribe": {group: true, only: true},
}

// jsCallee resolves it.each(table), describe.skip and friends to the root
// identifier and the properties after it.
func jsCallee(fn *sitter.Node, src []byte) (string, []string) {
	switch fn.Type() {
	case "identifier":
		return text(fn, src), nil
	case "member_expression":
		root, props := jsCallee(fn.ChildByFieldName("object"), src)
		return root, append(props, text(fn.ChildByFieldName("property"), src))
	case "call_expression":
		return jsCallee(fn.ChildByFieldName("function"), src)
	}
	return "", nil
}

func jsRoleOf(call *sitter.Node, src []byte) (jsRole, bool) {
	fn := call.ChildByFieldName("function")
	if fn == nil {
		return jsRole{}, false
	}
	root, props := jsCallee(fn, src)
	r, ok := jsRoots[root]
	if !ok {
		return jsRole{}, false
	}
	for _, p := range props {
		switch p {
		case "before", "after", "beforeEach", "afterEach", "beforeAll", "afterAll", "always":
			return jsRole{}, false // AVA's hooks: test.beforeEach(fn)
		case "skip", "todo", "failing", "skipIf", "runIf":
			r.skip = true
		case "only":
			r.only = true
		}
	}
	// A test needs a name first and a body to run, unless it is a todo.
	args := children(call.ChildByFieldName("arguments"))
	if len(args) == 0 || isJSFunction(args[0]) {
		return jsRole{}, false
	}
	hasFn := false
	for _, a := range args[1:] {
		switch a.Type() {
		case "arrow_function", "function", "function_expression", "identifier", "member_expression":
			hasFn = true
		}
	}
	return r, hasFn || r.skip
}

func isJSFunction(n *sitter.Node) bool {
	switch n.Type() {
	case "arrow_function", "function", "function_expression":
		return true
	}
	return false
}

// jsUnquote undoes the escapes a test name's quotes need.
var jsUnquote = strings.NewReplacer(`\'`, `'`, `\"`, `"`, "\\`", "`")

func jsTests(grammar func() *sitter.Language) func(string, []byte) []Test {
	return func(_ string, src []byte) []Test {
		tree := parse(grammar, src)
		if tree == nil {
			return nil
		}
		defer tree.Close()
		src = blankComments(tree.RootNode(), src)
		w := walker{src: src}
		w.js(tree.RootNode(), scope{})
		return w.out
	}
}

func (w *walker) js(n *sitter.Node, sc scope) {
	if n.Type() == "call_expression" {
		if r, ok := jsRoleOf(n, w.src); ok && (r.test || r.group) {
			w.jsDeclared(n, r, sc)
			return
		}
	}
	for _, c := range children(n) {
		w.js(c, sc)
	}
}

// jsDeclared records a test, or walks a describe block's body with its
// markers passed down.
func (w *walker) jsDeclared(call *sitter.Node, r jsRole, sc scope) {
	src := w.src
	args := call.ChildByFieldName("arguments")
	name := ""
	if a := children(args); len(a) > 0 {
		name = jsUnquote.Replace(strings.Trim(text(a[0], src), "'\"`"))
	}
	marks := append([]Marker(nil), sc.marks...)
	callee := text(call.ChildByFieldName("function"), src)
	if i := strings.IndexByte(callee, '('); i > 0 {
		callee = callee[:i] // it.each([...]) is marked as it.each
	}
	if r.skip || r.only {
		marks = append(marks, Marker{Text: callee, Line: line(call), Only: r.only && !r.skip})
	}
	for _, a := range children(args) {
		if a.Type() != "object" {
			continue
		}
		for _, p := range children(a) {
			if k := text(p.ChildByFieldName("key"), src); p.Type() == "pair" && (k == "skip" || k == "todo") {
				marks = append(marks, Marker{Text: text(p, src), Line: line(p)})
			}
		}
	}
	if r.group {
		for _, a := range children(args) {
			w.js(a, scope{sc.prefix + name + " > ", marks})
		}
		return
	}
	// this.skip() (Mocha), t.skip() (node:test), ctx.skip() (Vitest).
	walk(args, func(n *sitter.Node) bool {
		if n.Type() == "call_expression" {
			if fn := n.ChildByFieldName("function"); fn != nil && fn.Type() == "member_expression" && text(fn.ChildByFieldName("property"), src) == "skip" {
				marks = append(marks, Marker{Text: text(n, src), Line: line(n)})
			}
		}
		return true
	})
	w.out = append(w.out, nodeTest(call, call, src, Test{Name: sc.prefix + name, Short: name, Skips: marks}))
}

// --- Rust (#[test] and test-framework attributes) ---

// rustFile is what one walk of a Rust file finds: its tests, and the byte
// ranges of test code (tests and #[cfg(test)] modules), which are not
// behaviour.
type rustFile struct {
	tests    []Test
	testCode []span
}

func rustTests(_ string, src []byte) []Test {
	tree := parse(rustGrammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	src = blankComments(tree.RootNode(), src)
	var f rustFile
	f.items(tree.RootNode(), src, scope{})
	return f.tests
}

// rustCode is treeCode for Rust, leaving inline tests out.
func rustCode(_ string, src []byte) (string, bool) {
	tree := parse(rustGrammar, src)
	if tree == nil {
		return "", false
	}
	defer tree.Close()
	var f rustFile
	f.items(tree.RootNode(), src, scope{})
	drop := f.testCode
	walk(tree.RootNode(), func(n *sitter.Node) bool {
		if isComment(n) {
			drop = append(drop, span{n.StartByte(), n.EndByte()})
			return false
		}
		return true
	})
	sortSpans(drop)
	return normalizeCode(src, drop, false), !tree.RootNode().HasError()
}

func sortSpans(s []span) {
	slices.SortFunc(s, func(a, b span) int { return cmp.Compare(a.start, b.start) })
}

// rustAttr returns an attribute item's content: "test", "ignore = \"x\"",
// "cfg(test)".
func rustAttr(item *sitter.Node, src []byte) string {
	for _, c := range children(item) {
		if c.Type() == "attribute" {
			return strings.Join(strings.Fields(text(c, src)), " ")
		}
	}
	return ""
}

func rustAttrPath(attr string) string {
	if i := strings.IndexAny(attr, "( ="); i >= 0 {
		return attr[:i]
	}
	return attr
}

func isRustTestAttr(attr string) bool {
	p := rustAttrPath(attr)
	switch p {
	case "test", "rstest", "test_case", "quickcheck", "wasm_bindgen_test":
		return true
	}
	return strings.HasSuffix(p, "::test")
}

// isRustSkipAttr: #[ignore], a #[cfg(...)] that may compile the test out,
// or a cfg_attr that ignores it.
func isRustSkipAttr(attr string) bool {
	switch p := rustAttrPath(attr); {
	case p == "ignore":
		return true
	case p == "cfg":
		return attr != "cfg(test)"
	case p == "cfg_attr":
		return strings.Contains(attr, "ignore")
	}
	return false
}

// items walks one module's items. Attributes precede the item they apply
// to, with comments allowed between.
func (f *rustFile) items(list *sitter.Node, src []byte, sc scope) {
	marks := append([]Marker(nil), sc.marks...)
	for _, c := range children(list) {
		if c.Type() == "inner_attribute_item" {
			if a := rustAttr(c, src); isRustSkipAttr(a) {
				marks = append(marks, Marker{Text: "#![" + a + "]", Line: line(c)})
			}
		}
	}
	var pending []*sitter.Node
	for _, c := range children(list) {
		switch c.Type() {
		case "attribute_item":
			pending = append(pending, c)
			continue
		case "line_comment", "block_comment":
			continue
		case "function_item":
			f.function(c, pending, src, scope{sc.prefix, marks})
		case "mod_item":
			f.module(c, pending, src, scope{sc.prefix, marks})
		}
		pending = nil
	}
}

func (f *rustFile) function(fn *sitter.Node, attrs []*sitter.Node, src []byte, sc scope) {
	isTest := false
	marks := append([]Marker(nil), sc.marks...)
	for _, a := range attrs {
		s := rustAttr(a, src)
		isTest = isTest || isRustTestAttr(s)
		if isRustSkipAttr(s) {
			marks = append(marks, Marker{Text: "#[" + s + "]", Line: line(a)})
		}
	}
	if !isTest {
		return
	}
	start := fn
	if len(attrs) > 0 {
		start = attrs[0]
	}
	name := text(fn.ChildByFieldName("name"), src)
	f.tests = append(f.tests, nodeTest(start, fn, src, Test{Name: sc.prefix + name, Short: name, Skips: marks}))
	f.testCode = append(f.testCode, span{start.StartByte(), fn.EndByte()})
}

func (f *rustFile) module(mod *sitter.Node, attrs []*sitter.Node, src []byte, sc scope) {
	marks := append([]Marker(nil), sc.marks...)
	cfgTest := false
	for _, a := range attrs {
		s := rustAttr(a, src)
		cfgTest = cfgTest || s == "cfg(test)"
		if isRustSkipAttr(s) {
			marks = append(marks, Marker{Text: "#[" + s + "]", Line: line(a)})
		}
	}
	body := mod.ChildByFieldName("body")
	if body == nil {
		return
	}
	f.items(body, src, scope{sc.prefix + text(mod.ChildByFieldName("name"), src) + "::", marks})
	if cfgTest {
		start := mod
		if len(attrs) > 0 {
			start = attrs[0]
		}
		f.testCode = append(f.testCode, span{start.StartByte(), mod.EndByte()})
	}
}

// --- Java (JUnit 4 and 5, TestNG's @Test) ---

var (
	javaTestAnnotations = map[string]bool{"Test": true, "ParameterizedTest": true, "RepeatedTest": true, "TestFactory": true, "TestTemplate": true, "Property": true}
	javaSkipAnnotation  = regexp.MustCompile(`^(Disabled\w*|Ignore|Enabled\w+)$`)
	javaAssume          = skipCall{"method_invocation", "name", regexp.MustCompile(`^assum(e|ing)\w*$`)}
)

func javaTests(_ string, src []byte) []Test {
	tree := parse(javaGrammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	src = blankComments(tree.RootNode(), src)
	w := walker{src: src}
	w.java(tree.RootNode(), scope{})
	return w.out
}

// javaAnnotations returns the simple names of a declaration's annotations
// with their nodes.
func javaAnnotations(decl *sitter.Node, src []byte) ([]string, []*sitter.Node) {
	var names []string
	var nodes []*sitter.Node
	for _, c := range children(decl) {
		if c.Type() != "modifiers" {
			continue
		}
		for _, a := range children(c) {
			if a.Type() == "marker_annotation" || a.Type() == "annotation" {
				n := text(a.ChildByFieldName("name"), src)
				names = append(names, n[strings.LastIndexByte(n, '.')+1:])
				nodes = append(nodes, a)
			}
		}
	}
	return names, nodes
}

func javaSkips(decl *sitter.Node, src []byte) []Marker {
	var out []Marker
	names, nodes := javaAnnotations(decl, src)
	for i, n := range names {
		if javaSkipAnnotation.MatchString(n) {
			out = append(out, Marker{Text: text(nodes[i], src), Line: line(nodes[i])})
		}
	}
	return out
}

func (w *walker) java(n *sitter.Node, sc scope) {
	src := w.src
	for _, c := range children(n) {
		switch c.Type() {
		case "class_declaration", "record_declaration", "enum_declaration", "interface_declaration":
			name := text(c.ChildByFieldName("name"), src)
			if body := c.ChildByFieldName("body"); body != nil {
				w.java(body, scope{sc.prefix + name + ".", append(append([]Marker(nil), sc.marks...), javaSkips(c, src)...)})
			}
		case "method_declaration":
			names, _ := javaAnnotations(c, src)
			isTest := false
			for _, a := range names {
				isTest = isTest || javaTestAnnotations[a]
			}
			if !isTest {
				continue
			}
			name := text(c.ChildByFieldName("name"), src)
			marks := append(append([]Marker(nil), sc.marks...), javaSkips(c, src)...)
			marks = append(marks, callMarks(c.ChildByFieldName("body"), src, javaAssume)...)
			w.out = append(w.out, nodeTest(c, c, src, Test{Name: sc.prefix + name, Short: name, Skips: marks}))
		}
	}
}
