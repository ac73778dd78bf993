package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// repo writes files into a fresh directory and opens it as a workspace.
func repo(t *testing.T, files map[string]string) *sandbox.Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func commands(cs []Check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name+": "+c.Run)
	}
	return out
}

func TestDetect(t *testing.T) {
	tests := map[string]struct {
		files      map[string]string
		opts       DetectOptions
		want       []string
		missingHas string
		module     string
	}{
		"go": {files: map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n"},
			want: []string{"build: go build ./...", "vet: go vet ./...", "test: go test ./..."}, module: "example.com/m"},
		"node with scripts": {files: map[string]string{"package.json": `{"scripts":{"lint":"eslint .","build":"tsc","test":"jest"}}`},
			want: []string{"lint: npm run lint", "build: npm run build", "test: npm test"}},
		"node placeholder test": {files: map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`},
			missingHas: "placeholder"},
		"node without scripts": {files: map[string]string{"package.json": `{"name":"x"}`}, missingHas: "no test script"},
		"python pyproject":     {files: map[string]string{"pyproject.toml": "[project]\n"}, want: []string{"test: python -m pytest"}},
		// python-slugify: setup.py and every test in test.py, which
		// pytest collects only when named.
		"python test.py":                     {files: map[string]string{"setup.py": "", "test.py": "", "slug/__init__.py": ""}, want: []string{"test: python -m pytest test.py"}},
		"python tests.py beside test_ files": {files: map[string]string{"setup.py": "", "tests.py": "", "pkg/test_a.py": ""}, want: []string{"test: python -m pytest"}},
		"python test.py with python_files":   {files: map[string]string{"setup.cfg": "[tool:pytest]\npython_files = test.py\n", "test.py": ""}, want: []string{"test: python -m pytest"}},
		// Issue 12: a tests/ folder alone is not Python (JavaScript
		// projects have them too).
		"python tests dir only": {files: map[string]string{"tests/test_x.py": ""}, missingHas: "No build or test command"},
		"rust offline":          {files: map[string]string{"Cargo.toml": ""}, want: []string{"build: cargo build --offline", "test: cargo test --offline"}},
		"rust with network": {files: map[string]string{"Cargo.toml": ""}, opts: DetectOptions{Network: true},
			want: []string{"build: cargo build", "test: cargo test"}},
		"java offline": {files: map[string]string{"pom.xml": ""}, want: []string{"test: mvn -q -B -o test"}},
		"nothing":      {files: map[string]string{"README.md": "hi"}, missingHas: "No build or test command"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := Detect(repo(t, tc.files), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := commands(d.Checks); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("checks = %q, want %q", got, tc.want)
			}
			if tc.missingHas != "" && !strings.Contains(strings.Join(d.Missing, " "), tc.missingHas) {
				t.Errorf("missing = %q, want mention of %q", d.Missing, tc.missingHas)
			}
			if d.GoModule != tc.module {
				t.Errorf("GoModule = %q, want %q", d.GoModule, tc.module)
			}
		})
	}
}

func TestDetectBadPackageJSON(t *testing.T) {
	_, err := Detect(repo(t, map[string]string{"package.json": "{not json"}), DetectOptions{})
	if err == nil || !strings.Contains(err.Error(), "package.json is not valid JSON") {
		t.Fatalf("err = %v, want a package.json error", err)
	}
}

func TestDetectIgnoresSymlinkOutside(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "go.mod"), []byte("module evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := repo(t, nil)
	if err := os.Symlink(filepath.Join(outside, "go.mod"), filepath.Join(ws.Dir(), "go.mod")); err != nil {
		t.Fatal(err)
	}
	_, err := Detect(ws, DetectOptions{})
	if err == nil {
		t.Fatal("Detect read a go.mod symlinked outside the repository")
	}
}

func TestConfiguredGate(t *testing.T) {
	if !Configured("Build", "make").Gate || Configured("test", "make test").Gate {
		t.Error("only build and compile checks are gates")
	}
}

func TestCheckResultJSON(t *testing.T) {
	in := CheckResult{Name: "test", Command: "go test ./...", Phase: Final, Ran: true, ExitCode: 1,
		Duration: 1234 * time.Millisecond, Runs: 3, Failures: 1, Flaky: true}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"duration_ms":1234`, `"phase":"final"`, `"passed":false`, `"exit_code":1`, `"ran":true`} {
		if !strings.Contains(string(data), field) {
			t.Errorf("JSON %s lacks %s", data, field)
		}
	}
	var out CheckResult
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: got %+v, want %+v", out, in)
	}
	if got := out.RunsText(); got != "1 of 3 runs failed" {
		t.Errorf("RunsText = %q", got)
	}
}
