package testsrc

import (
	"regexp"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/php"
)

var phpGrammar = php.GetLanguage

var (
	// phpTestDoc is PHPUnit's @test annotation in a doc comment.
	phpTestDoc = regexp.MustCompile(`(^|\s|\*)@test\b`)
	// phpSkipCall: $this->markTestSkipped(), markTestIncomplete().
	phpSkipCall = skipCall{"member_call_expression", "name", regexp.MustCompile(`^markTest(Skipped|Incomplete)$`)}
	// phpSkipDoc: @group skip-like markers are not PHPUnit's; only
	// attributes and calls skip. Requires* skip a test when unmet.
	phpSkipAttr = regexp.MustCompile(`^Requires\w*$`)
)

// phpTests lists the test methods of PHPUnit classes, as PHPUnit names
// them ("TemperatureTest::testBoiling"): public methods whose name starts
// with "test", or marked @test in their doc comment or #[Test].
func phpTests(_ string, src []byte) []Test {
	tree := parse(phpGrammar, src)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	var out []Test
	walk(tree.RootNode(), func(n *sitter.Node) bool {
		if n.Type() != "class_declaration" {
			return true
		}
		class := text(n.ChildByFieldName("name"), src)
		if body := n.ChildByFieldName("body"); body != nil {
			phpMethods(body, src, class, &out)
		}
		return false
	})
	return out
}

func phpMethods(body *sitter.Node, src []byte, class string, out *[]Test) {
	doc := ""
	for _, c := range children(body) {
		if c.Type() == "comment" {
			doc = text(c, src)
			continue
		}
		if c.Type() != "method_declaration" {
			doc = ""
			continue
		}
		name := text(c.ChildByFieldName("name"), src)
		var marks []Marker
		isTest := strings.HasPrefix(name, "test") || phpTestDoc.MatchString(doc)
		for _, a := range phpAttributes(c, src) {
			isTest = isTest || a == "Test"
			if phpSkipAttr.MatchString(a) {
				marks = append(marks, Marker{Text: "#[" + a + "]", Line: line(c)})
			}
		}
		if isTest {
			marks = append(marks, callMarks(c.ChildByFieldName("body"), src, phpSkipCall)...)
			t := nodeTest(c, c, src, Test{Name: class + "::" + name, Short: name, Skips: marks})
			t.Text = string(blankComments(c, src)[c.StartByte():c.EndByte()])
			if doc != "" {
				t.Text = doc + "\n" + t.Text // @test in the doc comment decides that it runs
			}
			*out = append(*out, t)
		}
		doc = ""
	}
}

// phpAttributes are the names of a method's #[...] attributes.
func phpAttributes(method *sitter.Node, src []byte) []string {
	var out []string
	walk(method.ChildByFieldName("attributes"), func(n *sitter.Node) bool {
		if n.Type() == "attribute" && n.NamedChildCount() > 0 {
			name := text(n.NamedChild(0), src)
			out = append(out, name[strings.LastIndexByte(name, '\\')+1:])
			return false
		}
		return true
	})
	return out
}
