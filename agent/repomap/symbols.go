package repomap

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/typescript/typescript"

	"github.com/patchwright/patchwright/sandbox"
)

// maxSymbolLen keeps one symbol line short; long signatures are cut.
const maxSymbolLen = 160

// fileSymbols returns the top-level symbols of a source file, or nil for
// a file of another language, a large or unreadable one, or generated code.
func fileSymbols(ctx context.Context, ws *sandbox.Workspace, name string, opts Options) []string {
	ext := path.Ext(name)
	lang, ok := languages[ext]
	if !ok && ext != ".go" {
		return nil
	}
	if strings.HasSuffix(name, ".min.js") {
		return nil
	}
	if info, err := ws.Stat(name); err != nil || info.Size() > opts.MaxFileBytes {
		return nil
	}
	src, err := ws.ReadFile(name)
	if err != nil {
		return nil
	}
	var syms []string
	if ext == ".go" {
		syms = goSymbols(name, src)
	} else {
		syms = treeSymbols(ctx, lang, src)
	}
	return capSymbols(syms, opts.MaxSymbols)
}

func capSymbols(syms []string, max int) []string {
	for i, s := range syms {
		lead := ""
		if strings.HasPrefix(s, "  ") {
			lead = "  " // a member under its class
		}
		s = lead + strings.Join(strings.Fields(s), " ")
		if len(s) > maxSymbolLen {
			s = strings.ToValidUTF8(s[:maxSymbolLen], "") + "…"
		}
		syms[i] = s
	}
	if len(syms) > max {
		syms = append(syms[:max:max], fmt.Sprintf("… %d more", len(syms)-max))
	}
	return syms
}

// goSymbols lists functions and methods with their signatures, types with
// their kind, and exported constants and variables. Generated files list
// nothing: their symbols are noise to someone fixing an issue.
func goSymbols(name string, src []byte) []string {
	fset := token.NewFileSet()
	// A file with syntax errors still yields the declarations before them.
	f, _ := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if f == nil || ast.IsGenerated(f) {
		return nil
	}
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			sig := *d
			sig.Body, sig.Doc = nil, nil
			var b bytes.Buffer
			if err := printer.Fprint(&b, fset, &sig); err == nil {
				out = append(out, b.String())
			}
		case *ast.GenDecl:
			out = append(out, genDeclSymbols(d)...)
		}
	}
	return out
}

func genDeclSymbols(d *ast.GenDecl) []string {
	var out []string
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			out = append(out, "type "+s.Name.Name+typeKind(s))
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if n.IsExported() {
					out = append(out, d.Tok.String()+" "+n.Name)
				}
			}
		}
	}
	return out
}

func typeKind(s *ast.TypeSpec) string {
	if s.Assign.IsValid() {
		return " = …"
	}
	switch s.Type.(type) {
	case *ast.StructType:
		return " struct"
	case *ast.InterfaceType:
		return " interface"
	case *ast.FuncType:
		return " func"
	case *ast.MapType:
		return " map"
	case *ast.ArrayType:
		return " slice"
	case *ast.ChanType:
		return " chan"
	case *ast.Ident, *ast.SelectorExpr, *ast.StarExpr, *ast.IndexExpr:
		return " (named)"
	}
	return ""
}

// language is a tree-sitter grammar and how to read its top level.
type language struct {
	grammar func() *sitter.Language
	// symbols returns the lines for one top-level node, or nil.
	symbols func(n *sitter.Node, src []byte) []string
}

// languages maps extensions to grammars. The set is small on purpose:
// each grammar is a large C compile. .tsx is read with the TypeScript
// grammar; JSX inside a function body does not disturb its top level.
var languages = map[string]language{
	".py":  {python.GetLanguage, pythonNode},
	".js":  {javascript.GetLanguage, jsNode},
	".jsx": {javascript.GetLanguage, jsNode},
	".mjs": {javascript.GetLanguage, jsNode},
	".cjs": {javascript.GetLanguage, jsNode},
	".ts":  {typescript.GetLanguage, jsNode},
	".tsx": {typescript.GetLanguage, jsNode},
}

func treeSymbols(ctx context.Context, lang language, src []byte) []string {
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(lang.grammar())
	tree, err := p.ParseCtx(ctx, nil, src)
	if err != nil || tree == nil {
		return nil
	}
	defer tree.Close()
	root := tree.RootNode()
	var out []string
	for i := 0; i < int(root.NamedChildCount()); i++ {
		out = append(out, lang.symbols(root.NamedChild(i), src)...)
	}
	return out
}

// field returns the text of a node's named field, or "".
func field(n *sitter.Node, name string, src []byte) string {
	if c := n.ChildByFieldName(name); c != nil {
		return c.Content(src)
	}
	return ""
}

func pythonNode(n *sitter.Node, src []byte) []string {
	switch n.Type() {
	case "decorated_definition":
		if def := n.ChildByFieldName("definition"); def != nil {
			return pythonNode(def, src)
		}
	case "function_definition":
		return []string{"def " + field(n, "name", src) + field(n, "parameters", src) + pyReturn(n, src)}
	case "class_definition":
		out := []string{"class " + field(n, "name", src) + field(n, "superclasses", src)}
		if body := n.ChildByFieldName("body"); body != nil {
			for i := 0; i < int(body.NamedChildCount()); i++ {
				for _, m := range pythonNode(body.NamedChild(i), src) {
					if strings.HasPrefix(m, "def ") {
						out = append(out, "  "+m)
					}
				}
			}
		}
		return out
	}
	return nil
}

func pyReturn(n *sitter.Node, src []byte) string {
	if r := field(n, "return_type", src); r != "" {
		return " -> " + r
	}
	return ""
}

func jsNode(n *sitter.Node, src []byte) []string {
	switch n.Type() {
	case "export_statement":
		if d := n.ChildByFieldName("declaration"); d != nil {
			syms := jsNode(d, src)
			if len(syms) > 0 {
				syms[0] = "export " + syms[0]
			}
			return syms
		}
	case "function_declaration", "generator_function_declaration":
		return []string{"function " + field(n, "name", src) + field(n, "parameters", src)}
	case "class_declaration", "abstract_class_declaration":
		return jsClass(n, src)
	case "interface_declaration":
		return []string{"interface " + field(n, "name", src)}
	case "type_alias_declaration":
		return []string{"type " + field(n, "name", src)}
	case "enum_declaration":
		return []string{"enum " + field(n, "name", src)}
	case "lexical_declaration", "variable_declaration":
		kind := field(n, "kind", src)
		if kind == "" {
			kind = "var"
		}
		var out []string
		for i := 0; i < int(n.NamedChildCount()); i++ {
			d := n.NamedChild(i)
			if d.Type() != "variable_declarator" {
				continue
			}
			s := kind + " " + field(d, "name", src)
			if v := d.ChildByFieldName("value"); v != nil && (v.Type() == "arrow_function" || v.Type() == "function_expression" || v.Type() == "function") {
				s += field(v, "parameters", src) + " =>"
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

func jsClass(n *sitter.Node, src []byte) []string {
	out := []string{"class " + field(n, "name", src)}
	body := n.ChildByFieldName("body")
	if body == nil {
		return out
	}
	for i := 0; i < int(body.NamedChildCount()); i++ {
		m := body.NamedChild(i)
		if m.Type() == "method_definition" || m.Type() == "method_signature" || m.Type() == "abstract_method_signature" {
			out = append(out, "  "+field(m, "name", src)+field(m, "parameters", src))
		}
	}
	return out
}
