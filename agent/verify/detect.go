package verify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/patchwright/patchwright/sandbox"
)

// Detection is what Detect found in a repository.
type Detection struct {
	// Checks are cheapest first.
	Checks []Check
	// Languages names each ecosystem found: "go", "node", "python",
	// "rust", "java".
	Languages []string
	// Missing says, one sentence each, what kind of check could not be
	// found, for the report's "Not verified" section.
	Missing []string
	// GoModule is the module path from go.mod, or "" without one. The
	// report uses it to map packages to directories.
	GoModule string
}

// DetectOptions tune Detect.
type DetectOptions struct {
	// Network says whether checks will run with a network. Default false:
	// the agent phase never has one, so Maven gets -o and Cargo --offline
	// and both use what setup downloaded.
	Network bool
}

// npmPlaceholderTest is the test script `npm init` writes. It fails
// without testing anything, so it is not a test.
const npmPlaceholderTest = "no test specified"

// Detect finds verification checks in the repository's root when
// .github/agent.yml has no `verify` list. It reads files only through ws,
// so a planted symlink cannot point it outside the repository.
func Detect(ws *sandbox.Workspace, opts DetectOptions) (Detection, error) {
	var d Detection
	steps := []func(*sandbox.Workspace, DetectOptions, *Detection) error{
		detectGo, detectNode, detectPython, detectRust, detectJava,
	}
	for _, step := range steps {
		if err := step(ws, opts, &d); err != nil {
			return Detection{}, err
		}
	}
	if len(d.Checks) == 0 {
		d.Missing = append(d.Missing, "No build or test command was configured in .github/agent.yml or detected (no go.mod, package.json scripts, pytest configuration, Cargo.toml or pom.xml at the repository root).")
	}
	return d, nil
}

// exists reports whether name is in the workspace. A path the workspace
// refuses counts as absent.
func exists(ws *sandbox.Workspace, name string) (bool, error) {
	_, err := ws.Stat(name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, sandbox.ErrPathDenied):
		return false, nil
	default:
		return false, fmt.Errorf("detect checks: stat %s: %w", name, err)
	}
}

func detectGo(ws *sandbox.Workspace, _ DetectOptions, d *Detection) error {
	ok, err := exists(ws, "go.mod")
	if err != nil || !ok {
		return err
	}
	data, err := ws.ReadFile("go.mod")
	if err != nil {
		return fmt.Errorf("detect checks: read go.mod: %w", err)
	}
	d.GoModule = goModulePath(string(data))
	d.Languages = append(d.Languages, "go")
	d.Checks = append(d.Checks,
		Check{Name: "build", Run: "go build ./...", Gate: true},
		Check{Name: "vet", Run: "go vet ./..."},
		Check{Name: "test", Run: "go test ./..."},
	)
	return nil
}

// goModulePath returns the module path of a go.mod file, or "".
func goModulePath(gomod string) string {
	for line := range strings.Lines(gomod) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

func detectNode(ws *sandbox.Workspace, _ DetectOptions, d *Detection) error {
	ok, err := exists(ws, "package.json")
	if err != nil || !ok {
		return err
	}
	data, err := ws.ReadFile("package.json")
	if err != nil {
		return fmt.Errorf("detect checks: read package.json: %w", err)
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return fmt.Errorf("detect checks: package.json is not valid JSON: %w", err)
	}
	d.Languages = append(d.Languages, "node")
	if s := pkg.Scripts["lint"]; s != "" {
		d.Checks = append(d.Checks, Check{Name: "lint", Run: "npm run lint"})
	} else {
		d.Missing = append(d.Missing, "package.json has no lint script; style was not checked.")
	}
	if s := pkg.Scripts["build"]; s != "" {
		d.Checks = append(d.Checks, Check{Name: "build", Run: "npm run build", Gate: true})
	}
	switch s := pkg.Scripts["test"]; {
	case s == "":
		d.Missing = append(d.Missing, "package.json has no test script; the JavaScript code was not tested.")
	case strings.Contains(s, npmPlaceholderTest):
		d.Missing = append(d.Missing, "package.json's test script is npm's placeholder (\"no test specified\"); the JavaScript code was not tested.")
	default:
		d.Checks = append(d.Checks, Check{Name: "test", Run: "npm test"})
	}
	return nil
}

func detectPython(ws *sandbox.Workspace, _ DetectOptions, d *Detection) error {
	for _, name := range []string{"pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "tests"} {
		ok, err := exists(ws, name)
		if err != nil {
			return err
		}
		if ok {
			d.Languages = append(d.Languages, "python")
			d.Checks = append(d.Checks, Check{Name: "test", Run: "python -m pytest"})
			return nil
		}
	}
	return nil
}

func detectRust(ws *sandbox.Workspace, opts DetectOptions, d *Detection) error {
	ok, err := exists(ws, "Cargo.toml")
	if err != nil || !ok {
		return err
	}
	offline := ""
	if !opts.Network {
		offline = " --offline"
	}
	d.Languages = append(d.Languages, "rust")
	d.Checks = append(d.Checks,
		Check{Name: "build", Run: "cargo build" + offline, Gate: true},
		Check{Name: "test", Run: "cargo test" + offline},
	)
	return nil
}

func detectJava(ws *sandbox.Workspace, opts DetectOptions, d *Detection) error {
	ok, err := exists(ws, "pom.xml")
	if err != nil || !ok {
		return err
	}
	cmd := "mvn -q -B test"
	if !opts.Network {
		cmd = "mvn -q -B -o test"
	}
	d.Languages = append(d.Languages, "java")
	d.Checks = append(d.Checks, Check{Name: "test", Run: cmd})
	return nil
}

// Configured makes the Check for one entry of .github/agent.yml's
// `verify` list. A check named "build" or "compile" is a gate.
func Configured(name, run string) Check {
	n := strings.ToLower(name)
	return Check{Name: name, Run: run, Gate: n == "build" || n == "compile"}
}
