package main

import (
	"os/exec"
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

// TestLayout pins DESIGN §2's dependency rules, so the layout cannot rot:
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
	for pkg, banned := range rules {
		for _, d := range deps(t, pkg) {
			if d == module+pkg || (pkg == "jobs/githubapi" && d == module+"jobs") {
				continue
			}
			for _, b := range banned {
				if strings.HasPrefix(d, b) {
					t.Errorf("%s depends on %s", pkg, d)
				}
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
