package testsrc

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/doc"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	textcut "github.com/patchwright/patchwright/internal/text"
)

// goFile is a parsed Go test file with its comments blanked.
type goFile struct {
	fset *token.FileSet
	file *ast.File
	// src has every comment turned to spaces, newlines kept.
	src []byte
}

func parseGo(p string, src []byte) (*goFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution|parser.ParseComments)
	if f == nil {
		return nil, err
	}
	blanked := slices.Clone(src)
	for _, g := range f.Comments {
		blank(blanked[fset.Position(g.Pos()).Offset:fset.Position(g.End()).Offset])
	}
	return &goFile{fset: fset, file: f, src: blanked}, err
}

// test makes a Test of a function declaration; its doc comment is left
// out, since rewording it changes no test.
func (g *goFile) test(fn *ast.FuncDecl, kind Kind) Test {
	start, end := g.fset.Position(fn.Pos()).Offset, g.fset.Position(fn.End()).Offset
	t := Test{Name: fn.Name.Name, Short: fn.Name.Name, Kind: kind, Line: g.fset.Position(fn.Pos()).Line,
		Start: start, End: end, Text: string(g.src[start:end])}
	if fn.Body != nil {
		t.Skips = goSkips(g.fset, g.src, fn.Body)
	}
	return t
}

// goTests lists the functions go test runs, by its own rule
// (cmd/go/internal/load/test.go): Test, Benchmark and Fuzz followed by
// nothing or a rune that is not lower case, with the one parameter
// *testing.T, *testing.B or *testing.F; TestMain with *testing.M is
// setup, with *testing.T a test; examples as go/doc finds them, run only
// when they have an output comment.
func goTests(p string, src []byte) ([]Test, error) {
	g, err := parseGo(p, src)
	if g == nil {
		return nil, err
	}
	var out []Test
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	mains := 0
	for _, d := range g.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		name := fn.Name.Name
		switch {
		case name == "TestMain":
			if isTestFunc(fn, "T") {
				out = append(out, g.test(fn, KindTest))
				continue
			}
			if mains++; mains > 1 {
				errs = append(errs, errors.New("multiple definitions of TestMain"))
			}
			errs = append(errs, checkTestFunc(g.fset, fn, "M"))
		case isTest(name, "Test"):
			out = append(out, g.test(fn, KindTest))
			errs = append(errs, checkTestFunc(g.fset, fn, "T"))
		case isTest(name, "Benchmark"):
			out = append(out, g.test(fn, KindBenchmark))
			errs = append(errs, checkTestFunc(g.fset, fn, "B"))
		case isTest(name, "Fuzz"):
			out = append(out, g.test(fn, KindFuzz))
			errs = append(errs, checkTestFunc(g.fset, fn, "F"))
		}
	}
	out = append(out, g.examples()...)
	slices.SortStableFunc(out, func(a, b Test) int { return a.Start - b.Start })
	return out, errors.Join(errs...)
}

// examples are the examples go test runs: those with an output comment.
func (g *goFile) examples() []Test {
	run := map[string]bool{}
	for _, e := range doc.Examples(g.file) {
		if e.Output != "" || e.EmptyOutput {
			run["Example"+e.Name] = true
		}
	}
	var out []Test
	for _, d := range g.file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && run[fn.Name.Name] {
			out = append(out, g.test(fn, KindExample))
		}
	}
	return out
}

// isTest is cmd/go's: the prefix, then nothing or a rune that is not a
// lower-case letter.
func isTest(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// isTestFunc is cmd/go's signature check: one parameter of type *arg or
// *something.arg, and no results.
func isTestFunc(fn *ast.FuncDecl, arg string) bool {
	params := fn.Type.Params.List
	if fn.Type.Results != nil && len(fn.Type.Results.List) > 0 || len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	ptr, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	switch x := ptr.X.(type) {
	case *ast.Ident:
		return x.Name == arg
	case *ast.SelectorExpr:
		return x.Sel.Name == arg
	}
	return false
}

// checkTestFunc is the error go test stops on for a wrong signature.
func checkTestFunc(fset *token.FileSet, fn *ast.FuncDecl, arg string) error {
	why := ""
	if !isTestFunc(fn, arg) {
		why = fmt.Sprintf("must be: func %s(%s *testing.%s)", fn.Name.Name, strings.ToLower(arg), arg)
	}
	if fn.Type.TypeParams.NumFields() > 0 {
		why = "test functions cannot have type parameters"
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%s: wrong signature for %s, %s", fset.Position(fn.Pos()), fn.Name.Name, why)
}

// goSkips finds calls of Skip, Skipf and SkipNow on any receiver (t, b, f,
// or a subtest's own t).
func goSkips(fset *token.FileSet, src []byte, body *ast.BlockStmt) []Marker {
	var out []Marker
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if ok && (sel.Sel.Name == "Skip" || sel.Sel.Name == "Skipf" || sel.Sel.Name == "SkipNow") {
			s, e := fset.Position(call.Pos()).Offset, fset.Position(call.End()).Offset
			out = append(out, Marker{Text: string(src[s:e]), Line: fset.Position(call.Pos()).Line})
		}
		return true
	})
	return out
}

// here is the build context of the sandbox: linux/amd64, cgo on, no
// tags, this toolchain's release tags.
var here = func() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled, c.BuildTags = "linux", "amd64", true, nil
	return c
}()

// Excluded says why go test ./... on linux/amd64 would not build a Go
// file: a directory it skips (a name beginning with _ or ., testdata,
// vendor), a file name beginning with _ or ., a GOOS or GOARCH suffix
// (_windows_test.go) or a build constraint that excludes this system. It
// is "" for a file that builds, and for any file that is not Go.
func Excluded(p string, src []byte) string {
	if path.Ext(p) != ".go" {
		return ""
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch {
		case d == ".":
		case d == "testdata", d == "vendor":
			return fmt.Sprintf("`go test ./...` skips `%s` directories", d)
		case strings.HasPrefix(d, "_"), strings.HasPrefix(d, "."):
			return fmt.Sprintf("`go test ./...` skips the directory `%s`, as go ignores names beginning with `%s`", d, d[:1])
		}
	}
	base := path.Base(p)
	if strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".") {
		return fmt.Sprintf("go ignores files whose names begin with `%s`", base[:1])
	}
	if !matches(base, nil) {
		return fmt.Sprintf("the name `%s` builds it only for the system it names, not linux/amd64", base)
	}
	if !matches(base, src) {
		expr, _ := GoConstraint(src)
		return fmt.Sprintf("its build constraint `%s` excludes linux/amd64 without build tags", oneLine(expr))
	}
	return ""
}

// matches is go/build's own decision for one file's name and source.
func matches(base string, src []byte) bool {
	c := here
	c.OpenFile = func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(src)), nil }
	ok, err := c.MatchFile(".", base)
	return ok || err != nil // a header go/build cannot read fails the build, not the match
}

// GoConstraint returns a Go file's build constraint as written (//go:build
// or the old // +build lines), and its line; "" when it has none.
func GoConstraint(src []byte) (string, int) {
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

func oneLine(s string) string { return textcut.Line(s) }

// goCode returns a Go file's tokens without comments, so a reworded
// comment or a reformat is not a change of behaviour.
func goCode(_ string, src []byte) (string, bool) { return goScan(src, true) }

// goScan is src's tokens, one per line, without comments; the semicolons
// Go inserts at line ends only when lineSemis is set. ok is false when
// src does not scan.
func goScan(src []byte, lineSemis bool) (code string, ok bool) {
	file := token.NewFileSet().AddFile("", -1, len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, src, func(token.Position, string) { bad = true }, 0)
	var b strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if !lineSemis && tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		b.WriteString(tok.String() + " " + lit + "\n")
	}
	return b.String(), !bad
}

// goHooks are a test file's TestMain(*testing.M) and init functions.
func goHooks(p string, src []byte) []Hook {
	g, _ := parseGo(p, src)
	if g == nil {
		return nil
	}
	var out []Hook
	for _, d := range g.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		if fn.Name.Name == "init" || fn.Name.Name == "TestMain" && !isTestFunc(fn, "T") {
			t := g.test(fn, "")
			out = append(out, Hook{Name: fn.Name.Name, Line: t.Line, Text: t.Text})
		}
	}
	return out
}
