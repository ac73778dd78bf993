package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/patchwright/patchwright/"

// deps lists what pkg compiles (go list -deps), test files excluded.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestLayout pins docs/design.md §2's dependency rules, so the layout cannot rot:
// a light package that starts compiling a heavy one fails here.
func TestLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	docker := "github.com/docker/docker/"
	rules := map[string][]string{
		"webhook":        {docker, "github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", "github.com/zricethezav/gitleaks", "github.com/go-git/go-git", module + "jobs/worker", module + "jobs/pipeline"},
		"jobs":           {docker, "github.com/go-git/go-git", module + "agent", module + "report", module + "jobs/"},
		"report":         {docker},
		"agent/ledger":   {docker, module},
		"eval":           {docker, module + "jobs"},
		"jobs/githubapi": {module + "jobs/githubjob", module + "jobs/pipeline", module + "jobs/worker", module + "report", module + "webhook"},
	}
	for _, sub := range []string{"webhook/payload", "webhook/setup", "webhook/queueui", "webhook/runpage", "webhook/runsui", "webhook/basicauth"} {
		rules[sub] = []string{docker, "github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", module + "jobs/pipeline", module + "jobs/worker"}
	}
	// The OpenTelemetry SDK and exporter are cmd's (jobs/tracing): what
	// makes spans sees the trace API alone, and the webhook not even that.
	otelSDK := []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", module + "jobs/tracing"}
	for _, pkg := range []string{"webhook", "webhook/payload", "webhook/setup", "webhook/queueui", "webhook/runpage", "webhook/runsui", "webhook/basicauth"} {
		rules[pkg] = append(rules[pkg], otelSDK...)
	}
	rules["jobs/pipeline"] = otelSDK
	rules["jobs/githubjob"] = otelSDK
	for pkg, banned := range rules {
		for _, d := range deps(t, pkg) {
			if d == module+pkg || (pkg == "jobs/githubapi" && d == module+"jobs") || d == module+"jobs/tasks" || d == module+"jobs/interrupt" {
				continue
			}
			for _, b := range banned {
				if strings.HasPrefix(d, b) {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
	// The judge never knows the defendant: what decides an outcome does
	// not compile the model loop, its tools or its providers, and neither
	// the judge nor report reads git (the pipeline hands them the base).
	loop := []string{module + "agent", module + "agent/tools", module + "agent/provider", module + "agent/repomap"}
	judges := map[string][]string{
		"verify":          loop,
		"verify/testsrc":  loop,
		"verify/findings": loop,
		"report":          loop,
	}
	for pkg, banned := range judges {
		for _, d := range deps(t, pkg) {
			if slices.Contains(banned, d) {
				t.Errorf("%s depends on the model loop's %s", pkg, d)
			}
			if strings.HasPrefix(d, "github.com/go-git/go-git") {
				t.Errorf("%s depends on %s: the base reaches it through verify.BaseTree", pkg, d)
			}
		}
	}
	// Nor does the defendant know the judge: the loop, its tools and its
	// providers compile nothing of verify, so the model's side cannot reach
	// what decides its outcome.
	for _, pkg := range []string{"agent", "agent/tools", "agent/provider", "agent/repomap"} {
		for _, d := range deps(t, pkg) {
			if d == module+"verify" || strings.HasPrefix(d, module+"verify/") {
				t.Errorf("%s depends on the judge's %s", pkg, d)
			}
		}
	}
	// testsrc is a leaf: it reads source files and nothing of ours but
	// the text leaf.
	for _, d := range deps(t, "verify/testsrc") {
		if strings.HasPrefix(d, module) && d != module+"verify/testsrc" && d != module+"internal/text" {
			t.Errorf("verify/testsrc depends on %s", d)
		}
	}
	// internal/ holds leaves every room may use: they import nothing of ours.
	for _, pkg := range []string{"internal/text", "internal/logkey"} {
		for _, d := range deps(t, pkg) {
			if strings.HasPrefix(d, module) && d != module+pkg {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
	// The hidden markers have one owner that every side reads (the
	// webhook, the worker, report): it compiles nothing of ours.
	for _, d := range deps(t, "report/marker") {
		if strings.HasPrefix(d, module) && d != module+"report/marker" {
			t.Errorf("report/marker depends on %s", d)
		}
	}
	// The task catalogue and the interrupt are leaves: the webhook, the
	// queue, the worker and the pipeline read them, so they compile
	// nothing of ours.
	for _, leaf := range []string{"jobs/tasks", "jobs/interrupt"} {
		for _, d := range deps(t, leaf) {
			if strings.HasPrefix(d, module) && d != module+leaf {
				t.Errorf("%s depends on %s", leaf, d)
			}
		}
	}
	// sandbox is the interface and the host side: the standard library only.
	for _, d := range deps(t, "sandbox") {
		if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") && d != module+"sandbox" {
			t.Errorf("sandbox depends on %s", d)
		}
	}
}

// TestJobsRootSurface keeps the jobs root the queue the webhook needs:
// at most 35 exported names. What only the worker or the pipeline uses
// belongs below it (the task catalogue is jobs/tasks).
func TestJobsRootSurface(t *testing.T) {
	const max = 35
	paths, err := filepath.Glob("../../jobs/*.go")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no jobs sources: %v", err)
	}
	var names []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, exported(f)...)
	}
	if len(names) > max {
		slices.Sort(names)
		t.Errorf("the jobs root exports %d names, over %d: %v", len(names), max, names)
	}
}

// exported lists f's exported top-level names (methods are their type's).
func exported(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				out = append(out, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if sp.Name.IsExported() {
						out = append(out, sp.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}
