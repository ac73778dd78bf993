package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

const designExample = `image: golang:1.23            # sandbox image; default from the operator
setup:                        # run once before the baseline, network per setup_network
  - go mod download
setup_network: true
verify:
  - name: build
    run: go build ./...
  - name: vet
    run: go vet ./...
  - name: test
    run: go test ./...
protected_paths: [".github/workflows/**"]
limits: {max_steps: 40, max_minutes: 30, max_input_tokens: 2000000,
         max_changed_files: 30, max_changed_lines: 1500}
draft: auto
`

func TestParseDesignExample(t *testing.T) {
	c, err := Parse([]byte(designExample))
	if err != nil {
		t.Fatal(err)
	}
	yes, ci := true, DefaultCIFixAttempts
	want := Config{
		Image: "golang:1.23", Setup: []string{"go mod download"}, SetupNetwork: &yes,
		Verify:         []Check{{"build", "go build ./..."}, {"vet", "go vet ./..."}, {"test", "go test ./..."}},
		ProtectedPaths: []string{".github/workflows/**"},
		Limits:         Limits{MaxSteps: 40, MergeSteps: 15, MaxMinutes: 30, MaxInputTokens: 2000000, MaxChangedFiles: 30, MaxChangedLines: 1500},
		Draft:          DraftAuto,
		CIFixAttempts:  &ci,
		Review:         ReviewOn,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", c, want)
	}
}

func TestParseDefaults(t *testing.T) {
	for name, src := range map[string]string{"empty": "", "comment only": "# nothing\n", "partial": "limits: {max_steps: 10}\n"} {
		t.Run(name, func(t *testing.T) {
			c, err := Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if !c.Network() || c.Draft != DefaultDraft || c.Limits.MaxMinutes != DefaultMaxMinutes || c.Limits.MaxInputTokens != DefaultMaxInputTokens ||
				c.Limits.MaxChangedFiles != DefaultMaxChangedFiles || c.Limits.MaxChangedLines != DefaultMaxChangedLines {
				t.Errorf("defaults not filled: %+v", c)
			}
			if name != "partial" && c.Limits.MaxSteps != DefaultMaxSteps {
				t.Errorf("MaxSteps = %d", c.Limits.MaxSteps)
			}
		})
	}
	if c := Default(); c.CIFixLimit() != DefaultCIFixAttempts {
		t.Errorf("default ci_fix_attempts = %d, want %d", c.CIFixLimit(), DefaultCIFixAttempts)
	}
	if c, err := Parse([]byte("ci_fix_attempts: 0\n")); err != nil || c.CIFixLimit() != 0 {
		t.Errorf("ci_fix_attempts: 0 gave %d, %v; want 0 (off)", c.CIFixLimit(), err)
	}
	if c := Default(); !c.Reviewed() {
		t.Error("the review before publishing is off by default; want on")
	}
	if c, err := Parse([]byte("review: off\n")); err != nil || c.Reviewed() {
		t.Errorf("review: off gave %v, %v; want off", c.Reviewed(), err)
	}
	off, err := Parse([]byte("setup_network: false\n"))
	if err != nil || off.Network() {
		t.Errorf("setup_network: false gave %v, %v", off.Network(), err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct{ src, want string }{
		"unknown top-level key":   {"image: x\ncolour: blue\n", `line 2: unknown key "colour"`},
		"unknown key in verify":   {"verify:\n  - name: t\n    run: x\n    timeout: 5\n", `line 4: unknown key "timeout"`},
		"unknown key in limits":   {"limits:\n  max_stepz: 3\n", `line 2: unknown key "max_stepz"`},
		"wrong type":              {"limits: {max_steps: many}\n", "line 1: cannot unmarshal"},
		"setup not a list":        {"setup: go mod download\n", "line 1: cannot unmarshal"},
		"bad draft":               {"draft: sometimes\n", `draft: "sometimes" is not one of auto, always, never`},
		"empty check name":        {"verify:\n  - run: make\n", "verify[0]: name is empty"},
		"empty check command":     {"verify:\n  - name: test\n", "verify[0] (test): run is empty"},
		"duplicate check":         {"verify:\n  - {name: t, run: a}\n  - {name: t, run: b}\n", `verify[1]: the name "t" is used twice`},
		"negative limit":          {"limits: {max_minutes: -1}\n", "limits: values must be positive"},
		"negative file limit":     {"limits: {max_changed_files: -1}\n", "limits: values must be positive"},
		"negative line limit":     {"limits: {max_changed_lines: -5}\n", "limits: values must be positive"},
		"negative cost cap":       {"limits: {max_cost_usd: -1}\n", "limits: values must be positive"},
		"cost cap not a number":   {"limits: {max_cost_usd: lots}\n", "line 1: cannot unmarshal"},
		"unknown scope key":       {"limits: {max_changed_file: 3}\n", `line 1: unknown key "max_changed_file"`},
		"line limit not a number": {"limits: {max_changed_lines: lots}\n", "line 1: cannot unmarshal"},
		"two documents":           {"image: a\n---\nimage: b\n", "more than one YAML document"},
		"not a mapping":           {"- a\n- b\n", "cannot unmarshal"},
		"malformed":               {"image: [unclosed\n", Path},
		"empty setup command":     {"setup: ['']\n", "setup[0]: empty command"},
		"empty protected path":    {"protected_paths: ['']\n", "protected_paths[0]: empty pattern"},
		"negative ci fixes":       {"ci_fix_attempts: -1\n", "ci_fix_attempts: -1 is not between 0 and 10"},
		"too many ci fixes":       {"ci_fix_attempts: 11\n", "ci_fix_attempts: 11 is not between 0 and 10"},
		"bad reviewer":            {"reviewers: [octocat, \"-bad\"]\n", `reviewers[1]: "-bad" is not a GitHub login`},
		"bad merge_conflicts":     {"merge_conflicts: sometimes\n", `merge_conflicts: "sometimes" is not one of auto, off`},
		"ci fixes not a number":   {"ci_fix_attempts: two\n", "line 1: cannot unmarshal"},
		"review not on or off":    {"review: false\n", `review: "false" is not one of on, off`},
		"bad protected glob":      {"protected_paths: ['docs/[a-']\n", `protected_paths[0]: "docs/[a-" is not a valid glob`},
		"bad service name":        {"services:\n  - {name: My_DB, image: pg}\n", `services[0]: name "My_DB" is not a host name`},
		"service without image":   {"services:\n  - {name: db}\n", "services[0] (db): image is empty"},
		"duplicate service":       {"services:\n  - {name: db, image: a}\n  - {name: db, image: b}\n", `services[1]: the name "db" is used twice`},
		"unknown service key":     {"services:\n  - {name: db, image: a, ports: [1]}\n", `unknown key "ports"`},
		"bad service env":         {"services:\n  - name: db\n    image: a\n    environment: {'A=B': x}\n", `environment: "A=B" is not a variable name`},
		"bad network word":        {"network: closed\n", `line 1: network: "closed" is not open, allowlist`},
		"network a list":          {"network: [a]\n", "line 1: network: want open, allowlist or a mapping"},
		"unknown network key":     {"network:\n  allowed: [a]\n", `line 2: network: unknown key "allowed"`},
		"allow not a list":        {"network: {allow: pypi.org}\n", "cannot unmarshal"},
		"bad allow entry":         {"network: {allow: [pypi.org, 'http://x/y']}\n", `network.allow[1]: "http://x/y" is not a host name`},
		"bad allow port":          {"network: {allow: ['x.org:99999']}\n", `network.allow[0]: "x.org:99999": the port`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.src)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), Path) {
				t.Errorf("error %q does not start with %s and contain %q", err, Path, tc.want)
			}
		})
	}
}

// TestParseNetwork: network is open, allowlist (the default) or a
// mapping whose allow adds host names.
func TestParseNetwork(t *testing.T) {
	for src, want := range map[string]Egress{
		"":                     {},
		"network: allowlist\n": {},
		"network: open\n":      {Open: true},
		"network:\n  allow: [registry.corp.example:8443, '*.corp.example']\n": {Allow: []string{"registry.corp.example:8443", "*.corp.example"}},
	} {
		c, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if fmt.Sprint(c.Egress) != fmt.Sprint(want) {
			t.Errorf("Parse(%q).Egress = %+v, want %+v", src, c.Egress, want)
		}
	}
}

func TestParseServices(t *testing.T) {
	c, err := Parse([]byte("services:\n  - name: db\n    image: postgres:16\n    environment: {POSTGRES_PASSWORD: test}\n    health: pg_isready -U postgres\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Service{{Name: "db", Image: "postgres:16", Environment: map[string]string{"POSTGRES_PASSWORD": "test"}, Health: "pg_isready -U postgres"}}
	if fmt.Sprint(c.Services) != fmt.Sprint(want) {
		t.Fatalf("services %+v, want %+v", c.Services, want)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	c, err := Load(ws)
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Fatalf("no file: %+v, %v; want defaults", c, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Path), []byte("draft: never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(ws); err != nil || c.Draft != DraftNever {
		t.Fatalf("Load = %+v, %v", c, err)
	}
	if err := os.WriteFile(filepath.Join(dir, Path), []byte("bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ws); err == nil || !strings.Contains(err.Error(), `unknown key "bogus"`) {
		t.Fatalf("Load of a bad file: %v", err)
	}
}

func TestParseScopeLimits(t *testing.T) {
	c, err := Parse([]byte("limits: {max_changed_files: 5, max_changed_lines: 200}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxChangedFiles != 5 || c.Limits.MaxChangedLines != 200 || c.Limits.MaxSteps != DefaultMaxSteps {
		t.Errorf("limits = %+v", c.Limits)
	}
}

// A repository's cost cap lowers the operator's, never raises it.
func TestRunCostCap(t *testing.T) {
	c, err := Parse([]byte("limits: {max_cost_usd: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		repo, operator, want float64
	}{
		{0.5, 2, 0.5}, {0.5, 0.2, 0.2}, {0.5, 0, 0.5}, {0, 2, 2}, {0, 0, 0},
	} {
		l := c.Limits
		l.MaxCostUSD = tc.repo
		if got := l.RunCostCap(tc.operator); got != tc.want {
			t.Errorf("repository %v, operator %v: cap %v, want %v", tc.repo, tc.operator, got, tc.want)
		}
	}
	if c.Limits.MaxCostUSD != 0.5 {
		t.Errorf("parsed cap %v", c.Limits.MaxCostUSD)
	}
}

func TestMergeConflicts(t *testing.T) {
	for in, want := range map[string]bool{"": true, "merge_conflicts: auto\n": true, "merge_conflicts: off\n": false} {
		c, err := Parse([]byte(in))
		if err != nil || c.KeepsMergeable() != want {
			t.Errorf("Parse(%q): KeepsMergeable %v, %v; want %v", in, c.KeepsMergeable(), err, want)
		}
	}
}

func TestStaleAfter(t *testing.T) {
	for in, want := range map[string]int{"": 30, "stale_after_days: 0\n": 0, "stale_after_days: 7\n": 7} {
		c, err := Parse([]byte(in))
		if err != nil || c.StaleAfter() != want {
			t.Errorf("Parse(%q): StaleAfter %d, %v; want %d", in, c.StaleAfter(), err, want)
		}
	}
	if _, err := Parse([]byte("stale_after_days: -1\n")); err == nil || !strings.Contains(err.Error(), "stale_after_days: -1 is not between 0 and 3650") {
		t.Errorf("stale_after_days: -1: %v", err)
	}
}

func TestApproval(t *testing.T) {
	for in, want := range map[string]bool{"": false, "approval: off\n": false, "approval: independent\n": true} {
		c, err := Parse([]byte(in))
		if err != nil || c.IndependentApproval() != want {
			t.Errorf("Parse(%q): IndependentApproval %v, %v; want %v", in, c.IndependentApproval(), err, want)
		}
	}
	if _, err := Parse([]byte("approval: yes\n")); err == nil || !strings.Contains(err.Error(), "approval: \"yes\" is not one of off, independent") {
		t.Errorf("approval: yes: %v", err)
	}
}
