package findings

import (
	"context"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// The grammars the test-runner configuration reader needs (testconfig.go);
// the readers of tests themselves are verify/testsrc.
var (
	jsGrammar = javascript.GetLanguage
	tsGrammar = typescript.GetLanguage
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

// walk calls fn on n and its descendants, depth first, while fn returns
// true for a node.
func walk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for i := 0; i < int(n.NamedChildCount()); i++ {
		walk(n.NamedChild(i), fn)
	}
}
