package pipeline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"
)

// TestRunHoldsPhaseResults pins run's shape (issue 40): what spans the
// run (executor, job, clock, clone, workspace, ledger, scanner, the
// progress lock) and one field per phase's result. A new loose field
// fails here: put it in the result of the phase that establishes it
// (phaseresults.go), or, if it truly spans the run, add it below and say
// why in its comment.
func TestRunHoldsPhaseResults(t *testing.T) {
	want := []string{
		// What spans the run.
		"e", "job", "start", "repo", "ws", "ledger", "scanner", "mu", "progress", "clock", "spans",
		// A conflict's resolution: laid by prepare, read back by finish.
		"merge",
		// One per phase, in the order they run.
		"clone", "box", "first", "baseline", "model", "fin", "ended",
	}
	typ := reflect.TypeFor[run]()
	var got []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		got = append(got, f.Name)
		if !slices.Contains(want, f.Name) {
			t.Errorf("run has a loose field %s (%s): put it in its phase's result (phaseresults.go)", f.Name, f.Type)
		}
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("run lost its field %s; update this test's list", name)
		}
	}
}

// phaseFuncs are the functions of run.go that run a phase of work (the
// agent's container belongs to the sandbox or the setup phase), each
// with the result group it may fill in place: the final phase's
// helpers and the scans after it build r.fin together.
var phaseFuncs = map[string]string{
	"createSandbox": "", "setup": "", "createAgentSandbox": "",
	"runBaseline": "", "runAgent": "", "runFinal": "fin",
}

// phaseGroups are run's fields that hold a phase's result
// (phaseresults.go) and that a phase may read only through its input.
var phaseGroups = []string{"first", "baseline", "model", "fin", "ended"}

// TestPhasesTakeTheirInputs reads run.go (issue 40): no phase function
// reads or writes another phase's result through r; what it reads of an
// earlier phase is its parameter after ctx, and what it yields is its
// return, which work wires to the next phase. r.box (the containers
// beside the phases) and r.clone (the configuration every phase reads)
// stay on run.
func TestPhasesTakeTheirInputs(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "run.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil {
			continue
		}
		own, isPhase := phaseFuncs[fn.Name.Name]
		if !isPhase {
			continue
		}
		seen[fn.Name.Name] = true
		if n := fn.Type.Params.NumFields(); n != 2 {
			t.Errorf("%s takes %d parameters, want ctx and its input", fn.Name.Name, n)
		}
		for _, g := range resultGroupsUsed(fn.Body) {
			if g != own {
				t.Errorf("%s uses r.%s: take it as its input, or return it to work", fn.Name.Name, g)
			}
		}
	}
	for name := range phaseFuncs {
		if !seen[name] {
			t.Errorf("run.go has no phase function %s; update phaseFuncs", name)
		}
	}
}

// resultGroupsUsed are the phase-result fields of r that body selects.
func resultGroupsUsed(body *ast.BlockStmt) []string {
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "r" && slices.Contains(phaseGroups, sel.Sel.Name) {
			out = append(out, sel.Sel.Name)
		}
		return true
	})
	return out
}
