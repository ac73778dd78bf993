package verify

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const goModA = "module example.com/a\n\ngo 1.22\n"

func TestDetectProjects(t *testing.T) {
	tests := map[string]struct {
		files map[string]string
		want  []string
		// missingHas, when set, must appear in Missing.
		missingHas string
	}{
		"go and node at the root": {files: map[string]string{
			"go.mod":       goModA,
			"package.json": `{"scripts":{"build":"tsc","test":"node --test"}}`,
		}, want: []string{
			"build (go): go build ./...", "vet: go vet ./...", "test (go): go test ./...",
			"build (npm): npm run build", "test (npm): npm test",
		}},
		"javascript with a tests folder is not python": {files: map[string]string{
			"package.json":      `{"scripts":{"test":"mocha tests/"}}`,
			"tests/calc.js":     "",
			"tests/fixtures.py": "",
		}, want: []string{"test: npm test"}},
		"two go modules and an npm workspace": {files: map[string]string{
			"api/go.mod":                "module example.com/api\n\ngo 1.22\n",
			"worker/go.mod":             "module example.com/worker\n\ngo 1.22\n",
			"package.json":              `{"private":true,"workspaces":["packages/*"]}`,
			"package-lock.json":         "{}",
			"packages/web/package.json": `{"scripts":{"test":"vitest run","lint":"eslint ."}}`,
			"packages/ui/package.json":  `{"scripts":{"test":"jest"}}`,
			"packages/docs/README.md":   "not a package",
			"other/package.json":        `{"scripts":{"test":"jest"}}`,
		}, want: []string{
			"build (api: go): cd api && go build ./...", "vet (api: go): cd api && go vet ./...", "test (api: go): cd api && go test ./...",
			"build (worker: go): cd worker && go build ./...", "vet (worker: go): cd worker && go vet ./...", "test (worker: go): cd worker && go test ./...",
			"test (packages/ui: npm): cd packages/ui && npm test",
			"lint: cd packages/web && npm run lint", "test (packages/web: npm): cd packages/web && npm test",
		}},
		"go.work uses two modules": {files: map[string]string{
			"go.work":      "go 1.22\n\nuse (\n\t./a\n\t./b\n)\n",
			"a/go.mod":     goModA,
			"b/go.mod":     "module example.com/b\n\ngo 1.22\n",
			"tools/go.mod": "module example.com/tools\n\ngo 1.22\n",
		}, want: []string{
			"build (a: go): cd a && go build ./...", "vet (a: go): cd a && go vet ./...", "test (a: go): cd a && go test ./...",
			"build (b: go): cd b && go build ./...", "vet (b: go): cd b && go vet ./...", "test (b: go): cd b && go test ./...",
		}, missingHas: "tools is not in go.work"},
		"nested go module beside the root module": {files: map[string]string{
			"go.mod":          goModA,
			"examples/go.mod": "module example.com/a/examples\n\ngo 1.22\n",
		}, want: []string{
			"build (go): go build ./...", "vet (go): go vet ./...", "test (go): go test ./...",
			"build (examples: go): cd examples && go build ./...", "vet (examples: go): cd examples && go vet ./...", "test (examples: go): cd examples && go test ./...",
		}},
		"workspace root with its own test script": {files: map[string]string{
			"package.json":            `{"workspaces":{"packages":["packages/*"]},"scripts":{"test":"npm test --workspaces"}}`,
			"packages/a/package.json": `{"scripts":{"test":"jest"}}`,
		}, want: []string{"test: npm test"}, missingHas: "no lint script"},
		"pnpm workspace": {files: map[string]string{
			"package.json":           `{"private":true}`,
			"pnpm-workspace.yaml":    "packages:\n  - 'apps/*'\n",
			"pnpm-lock.yaml":         "",
			"apps/site/package.json": `{"scripts":{"test":"vitest run"}}`,
		}, want: []string{"test: cd apps/site && pnpm test"}},
		"yarn from the lockfile": {files: map[string]string{
			"package.json": `{"scripts":{"test":"jest"}}`, "yarn.lock": "",
		}, want: []string{"test: yarn test"}},
		"pnpm from packageManager": {files: map[string]string{
			"package.json": `{"packageManager":"pnpm@9.1.0","scripts":{"test":"jest"}}`,
		}, want: []string{"test: pnpm test"}},
		"python markers": {files: map[string]string{"setup.py": ""}, want: []string{"test: python -m pytest"}},
		"conftest only":  {files: map[string]string{"conftest.py": ""}, want: []string{"test: python -m pytest"}},
		"python beside go, nested conftest is the same project": {files: map[string]string{
			"go.mod": goModA, "py/pyproject.toml": "", "py/tests/conftest.py": "",
		}, want: []string{"build: go build ./...", "vet: go vet ./...", "test (go): go test ./...", "test (py: pytest): cd py && python -m pytest"}},
		"cargo workspace": {files: map[string]string{
			"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\"]\n",
			"crates/a/Cargo.toml": "[package]\nname = \"a\"\n",
		}, want: []string{"build: cargo build --workspace --offline", "test: cargo test --workspace --offline"}},
		"maven modules": {files: map[string]string{"pom.xml": "", "core/pom.xml": ""}, want: []string{"test: mvn -q -B -o test"}},
		"dependencies and hidden dirs are not projects": {files: map[string]string{
			"go.mod": goModA, "node_modules/x/package.json": `{"scripts":{"test":"jest"}}`,
			"vendor/y/go.mod": "module y\n", ".cache/z/Cargo.toml": "", "testdata/p/pom.xml": "",
		}, want: []string{"build: go build ./...", "vet: go vet ./...", "test: go test ./..."}},
		"a directory name unsafe for a shell": {files: map[string]string{
			"we b;x/package.json": `{"scripts":{"test":"jest"}}`,
		}, missingHas: "cannot be used in a command safely"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := Detect(repo(t, tc.files), DetectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := commands(d.Checks); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("checks:\n got %q\nwant %q", got, tc.want)
			}
			if tc.missingHas != "" && !strings.Contains(strings.Join(d.Missing, " "), tc.missingHas) {
				t.Errorf("missing = %q, want mention of %q", d.Missing, tc.missingHas)
			}
			seen := map[string]bool{}
			for _, c := range d.Checks {
				if seen[c.Name] {
					t.Errorf("check name %q is not unique", c.Name)
				}
				seen[c.Name] = true
			}
		})
	}
}

func TestDetectKinds(t *testing.T) {
	d, err := Detect(repo(t, map[string]string{
		"go.mod":            goModA,
		"package.json":      `{"scripts":{"test":"npm run test:unit","test:unit":"mocha"}}`,
		"py/pytest.ini":     "",
		"rs/Cargo.toml":     "",
		"java/pom.xml":      "",
		"tape/package.json": `{"scripts":{"test":"tape test/*.js"}}`,
	}), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]TestKind{}
	for _, c := range d.Checks {
		kinds[c.Name] = c.Kind
	}
	want := map[string]TestKind{
		"build (go)": "", "vet": "", "test (go)": KindGo, "test (npm)": KindMocha,
		"test (py: pytest)": KindPytest, "build (rs: cargo)": "", "test (rs: cargo)": KindCargo, "test (java: mvn)": KindMaven,
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
	if !reflect.DeepEqual(d.Languages, []string{"go", "node", "python", "rust", "java"}) {
		t.Errorf("languages = %v", d.Languages)
	}
}

// TestDetectBadWorkspaceFiles: a malformed workspace file is reported in
// Missing and detection goes on (the job still runs its other checks);
// only the root package.json, which every Node check needs, is an error.
func TestDetectBadWorkspaceFiles(t *testing.T) {
	for name, c := range map[string]struct {
		files      map[string]string
		missingHas string
		want       []string
	}{
		"go.work": {map[string]string{"go.work": "use (\n", "a/go.mod": goModA}, "go.work could not be parsed",
			[]string{"build: cd a && go build ./...", "vet: cd a && go vet ./...", "test: cd a && go test ./..."}},
		"pnpm yaml":        {map[string]string{"package.json": "{}", "pnpm-workspace.yaml": "packages: [unclosed"}, "pnpm-workspace.yaml could not be parsed", nil},
		"workspaces shape": {map[string]string{"package.json": `{"workspaces": 3}`}, "workspaces is neither a list", nil},
		"member json": {map[string]string{"package.json": `{"workspaces":["p/*"]}`, "p/x/package.json": "{bad", "p/y/package.json": `{"scripts":{"test":"jest"}}`},
			"p/x was not checked", []string{"test: cd p/y && npm test"}},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := Detect(repo(t, c.files), DetectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(d.Missing, " "), c.missingHas) {
				t.Errorf("missing = %q, want %q", d.Missing, c.missingHas)
			}
			if got := commands(d.Checks); !reflect.DeepEqual(got, c.want) {
				t.Errorf("checks = %q, want %q", got, c.want)
			}
		})
	}
}

func TestCover(t *testing.T) {
	d, err := Detect(repo(t, map[string]string{
		"go.mod":           goModA,
		"api/go.mod":       "module example.com/api\n\ngo 1.22\n",
		"web/package.json": `{"scripts":{"test":"jest"}}`,
		"scripts/tool.py":  "",
	}), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cov := d.Cover([]string{"api/handler.go", "web/src/app.ts", "web/README.md", "web/gen.go", "scripts/tool.py"})
	want := map[string][]string{
		"api/handler.go":  {"build (api: go)", "vet (api: go)", "test (api: go)"},
		"web/src/app.ts":  {"test (web: npm)"},
		"web/README.md":   {"test (web: npm)"},
		"web/gen.go":      {"build (go)", "vet (go)", "test (go)"},
		"scripts/tool.py": nil,
	}
	if !reflect.DeepEqual(cov.ByPath, want) {
		t.Errorf("ByPath:\n got %q\nwant %q", cov.ByPath, want)
	}
	if !reflect.DeepEqual(cov.Uncovered, []string{"scripts/tool.py"}) {
		t.Errorf("Uncovered = %q", cov.Uncovered)
	}
	if len(cov.Checks) != 7 || cov.Checks[0] != "build (go)" {
		t.Errorf("Checks = %q", cov.Checks)
	}
	only := d.Cover([]string{"web/src/app.ts"})
	if !reflect.DeepEqual(only.Checks, []string{"test (web: npm)"}) || !reflect.DeepEqual(only.Untouched, []string{".", "api"}) {
		t.Errorf("a change to web only: checks %q, untouched %q", only.Checks, only.Untouched)
	}
}

func TestDetectLimits(t *testing.T) {
	d, err := Detect(repo(t, map[string]string{
		"a/b/c/d/e/go.mod":   "module example.com/deep\n",
		"a/b/c/d/e/f/go.mod": "module example.com/deeper\n",
	}), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Projects) != 1 || d.Projects[0].Dir != "a/b/c/d/e" || d.Projects[0].Module != "example.com/deep" {
		t.Errorf("projects = %+v, want only the one 5 levels down", d.Projects)
	}
	many := map[string]string{}
	for i := range maxProjects + 2 {
		many[fmt.Sprintf("m%02d/go.mod", i)] = fmt.Sprintf("module example.com/m%02d\n", i)
	}
	d, err = Detect(repo(t, many), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Projects) != maxProjects || !strings.Contains(strings.Join(d.Missing, " "), "2 more were not (m16, m17)") {
		t.Errorf("%d projects, missing %q", len(d.Projects), d.Missing)
	}
}

func TestDetectionConfigured(t *testing.T) {
	d, err := Detect(repo(t, map[string]string{"package.json": `{"scripts":{"test":"mocha"}}`}), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.Configured("unit", "npm test"); c.Kind != KindMocha || c.Gate || c.Name != "unit" {
		t.Errorf("configured npm test = %+v, want mocha's kind", c)
	}
	if c := d.Configured("build", "make"); c.Kind != "" || !c.Gate {
		t.Errorf("configured make = %+v", c)
	}
}
