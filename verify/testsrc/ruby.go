package testsrc

import (
	"regexp"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/ruby"
)

var rubyGrammar = ruby.GetLanguage

// rubyRoles are the RSpec calls that declare examples and groups; x-
// prefixed ones are skipped, f-prefixed ones focused.
var rubyRoles = map[string]jsRole{
	"it": {test: true}, "specify": {test: true}, "example": {test: true}, "scenario": {test: true},
	"xit": {test: true, skip: true}, "xspecify": {test: true, skip: true}, "xexample": {test: true, skip: true},
	"skip": {test: true, skip: true}, "pending": {test: true, skip: true},
	"fit": {test: true, only: true}, "focus": {test: true, only: true},
	"describe": {group: true}, "context": {group: true}, "feature": {group: true},
	"xdescribe": {group: true, skip: true}, "xcontext": {group: true, skip: true},
	"fdescribe": {group: true, only: true}, "fcontext": {group: true, only: true},
}

// rubySkipCall is a skip inside an example or a minitest method.
var rubySkipCall = regexp.MustCompile(`^(skip|pending)$`)

// rubyTests lists RSpec examples by their full description (the group
// descriptions and the example's, as `rspec -e` matches them) and
// minitest's and test-unit's test_* methods and `test "name"` blocks by
// "Class#test_name", as minitest reports them (a test-unit
// `sub_test_case "name"` block's as "Class::name#test_name").
func rubyTests(_ string, src []byte) []Test {
	tree := parse(rubyGrammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	src = blankComments(tree.RootNode(), src)
	w := walker{src: src}
	w.ruby(tree.RootNode(), "", scope{})
	return w.out
}

// rubyDescription is a call's first argument as RSpec words it: a
// string's content, a constant's name.
func rubyDescription(call *sitter.Node, src []byte) (string, bool) {
	args := call.ChildByFieldName("arguments")
	if args == nil || args.NamedChildCount() == 0 {
		return "", false
	}
	a := args.NamedChild(0)
	switch a.Type() {
	case "string":
		return strings.Trim(text(a, src), `"'`), true
	case "constant", "scope_resolution", "simple_symbol":
		return text(a, src), true
	}
	return "", false
}

// joinRSpec joins a group's description and a nested one as RSpec does:
// no space before a method name ("Textkit.truncate", "Textkit#size").
func joinRSpec(prefix, desc string) string {
	switch {
	case prefix == "":
		return desc
	case strings.HasPrefix(desc, "#") || strings.HasPrefix(desc, ".") || strings.HasPrefix(desc, "::"):
		return prefix + desc
	}
	return prefix + " " + desc
}

// ruby walks n inside class (minitest's, "" outside one) and sc, whose
// prefix is the enclosing RSpec groups' description.
func (w *walker) ruby(n *sitter.Node, class string, sc scope) {
	src := w.src
	switch n.Type() {
	case "call":
		method := text(n.ChildByFieldName("method"), src)
		recv := text(n.ChildByFieldName("receiver"), src)
		r, ok := rubyRoles[method]
		if ok && (recv == "" || recv == "RSpec") {
			if w.rubyDeclared(n, r, class, sc) {
				return
			}
		}
		if method == "sub_test_case" && recv == "" && class != "" && w.rubySubTestCase(n, class, sc) {
			return
		}
		if method == "test" && recv == "" && class != "" { // ActiveSupport's test "name" do
			if desc, ok := rubyDescription(n, src); ok && n.ChildByFieldName("block") != nil {
				name := "test_" + strings.ReplaceAll(strings.TrimSpace(desc), " ", "_")
				marks := append(append([]Marker(nil), sc.marks...), rubySkips(n.ChildByFieldName("block"), src)...)
				w.out = append(w.out, nodeTest(n, n, src, Test{Name: class + "#" + name, Short: name, Skips: marks, Described: desc}))
				return
			}
		}
	case "class":
		name := text(n.ChildByFieldName("name"), src)
		if body := n.ChildByFieldName("body"); body != nil {
			for _, c := range children(body) {
				w.ruby(c, name, sc)
			}
		}
		return
	case "method":
		name := text(n.ChildByFieldName("name"), src)
		if class != "" && strings.HasPrefix(name, "test_") {
			marks := append(append([]Marker(nil), sc.marks...), rubySkips(n, src)...)
			w.out = append(w.out, nodeTest(n, n, src, Test{Name: class + "#" + name, Short: name, Skips: marks}))
		}
		return
	}
	for _, c := range children(n) {
		w.ruby(c, class, sc)
	}
}

// rubySubTestCase walks the block of test-unit's `sub_test_case "name"
// do`, which defines a subclass of class that test-unit names
// "Class::name": its tests are that class's. It returns false for a call
// without a literal name or a block.
func (w *walker) rubySubTestCase(call *sitter.Node, class string, sc scope) bool {
	desc, ok := rubyDescription(call, w.src)
	block := call.ChildByFieldName("block")
	if !ok || block == nil {
		return false
	}
	for _, c := range children(block) {
		w.ruby(c, class+"::"+desc, sc)
	}
	return true
}

// rubyDeclared records an RSpec example, or walks a group's block with
// its description and markers passed down. It returns false for a call
// that is no example or group after all (skip "why" inside an example).
func (w *walker) rubyDeclared(call *sitter.Node, r jsRole, class string, sc scope) bool {
	src := w.src
	method := text(call.ChildByFieldName("method"), src)
	desc, ok := rubyDescription(call, src)
	block := call.ChildByFieldName("block")
	if r.test && (method == "skip" || method == "pending") && block == nil {
		return false // skip "reason" inside an example: callMarks finds it
	}
	if !ok && r.test {
		return false
	}
	marks := append([]Marker(nil), sc.marks...)
	if r.skip || r.only {
		marks = append(marks, Marker{Text: method, Line: line(call), Only: r.only && !r.skip})
	}
	if args := call.ChildByFieldName("arguments"); args != nil {
		for _, a := range children(args) {
			if a.Type() == "pair" {
				if k := strings.TrimSuffix(text(a.ChildByFieldName("key"), src), ":"); k == "skip" || k == "pending" || k == ":skip" {
					marks = append(marks, Marker{Text: text(a, src), Line: line(a)})
				}
			}
		}
	}
	if r.group {
		if block != nil {
			for _, c := range children(block) {
				w.ruby(c, class, scope{joinRSpec(sc.prefix, desc), marks})
			}
		}
		return true
	}
	if block == nil {
		// An example without a block is pending.
		marks = append(marks, Marker{Text: text(call, src), Line: line(call)})
	} else {
		marks = append(marks, rubySkips(block, src)...)
	}
	w.out = append(w.out, nodeTest(call, call, src, Test{Name: joinRSpec(sc.prefix, desc), Short: desc, Skips: marks}))
	return true
}

// rubySkips finds skip and pending in a test's body: calls with a reason,
// and the bare word, which Ruby parses as an identifier.
func rubySkips(body *sitter.Node, src []byte) []Marker {
	out := callMarks(body, src, skipCall{"call", "method", rubySkipCall})
	walk(body, func(n *sitter.Node) bool {
		if n.Type() == "identifier" && rubySkipCall.MatchString(text(n, src)) && n.Parent() != nil && n.Parent().Type() != "call" {
			out = append(out, Marker{Text: text(n, src), Line: line(n)})
		}
		return true
	})
	return out
}
