package findings

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/scanner"
	"go/token"
	"slices"
	"strings"
)

// goTests lists the Test, Fuzz and Example functions go test runs, each
// with its t.Skip calls. TestMain is setup, not a test.
func goTests(p string, src []byte) []testCase {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, p, src, parser.SkipObjectResolution|parser.ParseComments)
	if f == nil {
		return nil
	}
	// Tests are compared without their comments.
	src = slices.Clone(src)
	for _, g := range f.Comments {
		blank(src[fset.Position(g.Pos()).Offset:fset.Position(g.End()).Offset])
	}
	var out []testCase
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !isGoTestName(fn.Name.Name) {
			continue
		}
		// The doc comment is left out: rewording it changes no test.
		start, end := fset.Position(fn.Pos()).Offset, fset.Position(fn.End()).Offset
		out = append(out, testCase{
			Name:  fn.Name.Name,
			Short: fn.Name.Name,
			Line:  fset.Position(fn.Pos()).Line,
			Text:  string(src[start:end]),
			Skips: goSkips(fset, src, fn.Body),
		})
	}
	return out
}

// isGoTestName follows go test: Test, Fuzz or Example, then nothing or a
// character that is not a lower-case letter.
func isGoTestName(n string) bool {
	if n == "TestMain" {
		return false
	}
	for _, prefix := range []string{"Test", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			return rest == "" || rest[0] == '_' || !(rest[0] >= 'a' && rest[0] <= 'z')
		}
	}
	return false
}

// goSkips finds calls of Skip, Skipf and SkipNow on any receiver (t, b, f,
// or a subtest's own t).
func goSkips(fset *token.FileSet, src []byte, body *ast.BlockStmt) []marker {
	var out []marker
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if ok && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow") {
			s, e := fset.Position(call.Pos()).Offset, fset.Position(call.End()).Offset
			out = append(out, marker{Text: string(src[s:e]), Line: fset.Position(call.Pos()).Line})
		}
		return true
	})
	return out
}

// goConstraint returns a Go file's build constraint as written (//go:build
// or the old // +build lines), and its line; "" when it has none.
func goConstraint(src []byte) (string, int) {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "", src, parser.PackageClauseOnly|parser.ParseComments)
	if f == nil {
		return "", 0
	}
	var lines []string
	first := 0
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) || constraint.IsPlusBuild(c.Text) {
				if first == 0 {
					first = fset.Position(c.Pos()).Line
				}
				lines = append(lines, strings.TrimSpace(c.Text))
			}
		}
	}
	return strings.Join(lines, "\n"), first
}

// goCode returns a Go file's tokens without comments, so a reworded
// comment or a reformat is not a change of behaviour.
func goCode(p string, src []byte) (string, bool) {
	fset := token.NewFileSet()
	file := fset.AddFile(p, -1, len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, src, func(token.Position, string) { bad = true }, 0)
	var b strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		b.WriteString(tok.String())
		b.WriteByte(' ')
		b.WriteString(lit)
		b.WriteByte('\n')
	}
	return b.String(), !bad
}
