package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/webhook"
)

// root is the module root, where README.md and .ci/run are.
const root = ".."

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// userDocs is the README and every page in docs/, as one text.
func userDocs(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(read(t, "README.md"))
	names, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(names) < 10 {
		t.Fatalf("docs/*.md: %d pages, %v", len(names), err)
	}
	for _, n := range names {
		b.WriteString(read(t, filepath.Join("docs", filepath.Base(n))))
	}
	return b.String()
}

// diff reports, in both directions, names one side has and the other has
// not.
func diff(t *testing.T, what, codeSide, docSide string, code, doc []string) {
	t.Helper()
	for _, n := range code {
		if !slices.Contains(doc, n) {
			t.Errorf("%s %q is in %s but not in %s", what, n, codeSide, docSide)
		}
	}
	for _, n := range doc {
		if !slices.Contains(code, n) {
			t.Errorf("%s %q is in %s but not in %s", what, n, docSide, codeSide)
		}
	}
}

// TestReadmeRunsCIsTestCommand: the README's Development section shows
// exactly the go test line .ci/run runs, beside `bash .ci/run`.
func TestReadmeRunsCIsTestCommand(t *testing.T) {
	var line string
	for _, l := range strings.Split(read(t, ".ci/run"), "\n") {
		if strings.HasPrefix(l, "go test ") {
			if line != "" {
				t.Fatalf(".ci/run has two go test lines:\n%s\n%s", line, l)
			}
			line = l
		}
	}
	if line == "" {
		t.Fatal(".ci/run has no line starting with `go test `")
	}
	fences := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(read(t, "README.md"), -1)
	for _, f := range fences {
		lines := strings.Split(f[1], "\n")
		if slices.Contains(lines, "bash .ci/run") && slices.Contains(lines, line) {
			return
		}
	}
	t.Errorf("README.md has no ```sh block holding both `bash .ci/run` and .ci/run's test command:\n%s", line)
}

// goFiles parses every Go file of the module (test files too when tests is
// set), skipping testdata.
func goFiles(t *testing.T, tests bool) map[string]*ast.File {
	t.Helper()
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || (!tests && strings.HasSuffix(p, "_test.go")) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files[p] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var settingName = regexp.MustCompile(`PATCHWRIGHT_[A-Z0-9_]*[A-Z0-9]`)

// stringLiterals returns every string constant in files that matches re
// as a whole.
func stringLiterals(files map[string]*ast.File, re *regexp.Regexp) []string {
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && re.MatchString(s) && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

// TestSettingsDocumented: every PATCHWRIGHT_ variable the product reads
// is in docs/configuration.md and design.md §4.2, and every one the docs name is read by
// some code (tests included: the docs name the tests' own variables).
func TestSettingsDocumented(t *testing.T) {
	product := map[string]*ast.File{}
	for p, f := range goFiles(t, false) {
		// Test helper packages (sandboxtest, githubtest, …) read the
		// tests' own variables, which are not settings.
		if !strings.HasSuffix(f.Name.Name, "test") {
			product[p] = f
		}
	}
	exact := regexp.MustCompile(`^` + settingName.String() + `$`)
	settings := stringLiterals(product, exact)
	if len(settings) < 30 {
		t.Fatalf("found only %d settings in the code: %v", len(settings), settings)
	}
	for _, page := range []string{"docs/configuration.md", "docs/design.md"} {
		text := read(t, page)
		for _, s := range settings {
			if !strings.Contains(text, "`"+s+"`") {
				t.Errorf("setting %s is read by the code but not in %s", s, page)
			}
		}
	}
	known := stringLiterals(goFiles(t, true), exact)
	// deploy/compose.yaml reads a few of its own through Compose's
	// interpolation (${PATCHWRIGHT_REDIS_PORT:-6379}).
	known = append(known, settingName.FindAllString(read(t, "deploy/compose.yaml"), -1)...)
	for _, s := range namedSettings(userDocs(t)) {
		if !slices.Contains(known, s) {
			t.Errorf("the docs name %s, which no code reads", s)
		}
	}
}

// namedSettings finds the variables a text names, leaving out families
// written with a wildcard (PATCHWRIGHT_SANDBOX_*).
func namedSettings(text string) []string {
	var out []string
	for _, loc := range settingName.FindAllStringIndex(text, -1) {
		name := text[loc[0]:loc[1]]
		if rest := text[loc[1]:]; strings.HasPrefix(rest, "_*") || strings.HasPrefix(rest, "*") {
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// ledgerTypes reads the event types the code declares: the string
// constant each EventType method returns.
func ledgerTypes(t *testing.T) []string {
	t.Helper()
	files := goFiles(t, false)
	consts := map[string]string{}
	var returned []string
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					vs, ok := spec.(*ast.ValueSpec)
					if !ok || d.Tok != token.CONST {
						continue
					}
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[name.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Name.Name != "EventType" || d.Recv == nil || d.Body == nil || len(d.Body.List) != 1 {
					continue
				}
				if ret, ok := d.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					if id, ok := ret.Results[0].(*ast.Ident); ok {
						returned = append(returned, id.Name)
					}
				}
			}
		}
	}
	var types []string
	for _, id := range returned {
		v, ok := consts[id]
		if !ok {
			t.Fatalf("EventType returns %s, which is not a string constant this test can read", id)
		}
		types = append(types, v)
	}
	slices.Sort(types)
	return types
}

// TestLedgerEventsDocumented: docs/ledger.md has a section per event
// type the code declares, and no other.
func TestLedgerEventsDocumented(t *testing.T) {
	code := ledgerTypes(t)
	if len(code) < 10 {
		t.Fatalf("found only %d ledger event types: %v", len(code), code)
	}
	var doc []string
	for _, m := range regexp.MustCompile("(?m)^### `([a-z_]+)`$").FindAllStringSubmatch(read(t, "docs/ledger.md"), -1) {
		doc = append(doc, m[1])
	}
	diff(t, "ledger event", "the code", "docs/ledger.md", code, doc)
	design := read(t, "docs/design.md")
	for _, e := range code {
		if !strings.Contains(design, "`"+e+"`") {
			t.Errorf("ledger event %s is not named in docs/design.md §4.1", e)
		}
	}
}

// commandNames are the code's comment commands, from webhook.Command.
func commandNames() []string {
	var out []string
	for c := webhook.Command(1); c.String() != webhook.NoCommand.String(); c++ {
		out = append(out, c.String())
	}
	return out
}

// TestCommandsDocumented: docs/commands.md and the README name every
// /agent command, and name none the parser does not know.
func TestCommandsDocumented(t *testing.T) {
	code := commandNames()
	if len(code) < 6 {
		t.Fatalf("found only %d commands: %v", len(code), code)
	}
	named := regexp.MustCompile("`/agent ([a-z]+)")
	for _, page := range []string{"docs/commands.md", "README.md"} {
		var doc []string
		for _, m := range named.FindAllStringSubmatch(read(t, page), -1) {
			if !slices.Contains(doc, m[1]) {
				doc = append(doc, m[1])
			}
		}
		diff(t, "command", "webhook.Command", page, code, doc)
	}
	for _, m := range named.FindAllStringSubmatch(userDocs(t), -1) {
		if !slices.Contains(code, m[1]) {
			t.Errorf("the docs name `/agent %s`, which the parser does not know", m[1])
		}
	}
}

// TestSubscribedEventsDocumented: the events install.md and
// troubleshooting.md say the app receives are app.yml's.
func TestSubscribedEventsDocumented(t *testing.T) {
	var app struct {
		DefaultEvents []string `yaml:"default_events"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "app.yml")), &app); err != nil {
		t.Fatal(err)
	}
	if len(app.DefaultEvents) == 0 {
		t.Fatal("app.yml has no default_events")
	}
	for _, c := range []struct{ page, marker string }{
		{"docs/install.md", "It receives the "},
		{"docs/troubleshooting.md", "The app subscribes to "},
	} {
		text := read(t, c.page)
		i := strings.Index(text, c.marker)
		if i < 0 {
			t.Errorf("%s: no sentence starting %q lists the subscribed events", c.page, c.marker)
			continue
		}
		sentence, _, _ := strings.Cut(text[i:], ".")
		sentence, _, _ = strings.Cut(sentence, "(`app.yml`)") // what follows is GitHub's own
		var doc []string
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(sentence, -1) {
			doc = append(doc, m[1])
		}
		diff(t, "subscribed event", "app.yml", c.page, app.DefaultEvents, doc)
	}
}

// ecosystemOf names the ecosystem of each build tool detection reports
// (verify.Project.Tool), as the docs name it. A tool missing here fails
// the test: detection learned something the docs do not say.
var ecosystemOf = map[string]string{
	"go": "Go", "npm": "Node", "pnpm": "Node", "yarn": "Node",
	"pytest": "Python", "cargo": "Rust", "mvn": "Maven", "gradle": "Gradle",
	"rspec": "Ruby", "rake": "Ruby", "minitest": "Ruby",
	"phpunit": "PHP", "composer": "PHP",
	"cmake": "CMake", "meson": "Meson", "make": "Make",
}

// TestEcosystemsDocumented runs detection on the fixture repository of
// each language (testdata/repos) and checks that the ecosystems it finds
// are those docs/agent-yml.md and docs/design.md §4.3 list.
func TestEcosystemsDocumented(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(root, "testdata", "repos", "*", "repo"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixture repositories: %v", err)
	}
	var code []string
	for _, dir := range dirs {
		ws, err := sandbox.OpenWorkspace(dir)
		if err != nil {
			t.Fatal(err)
		}
		d, err := verify.Detect(ws, verify.DetectOptions{})
		ws.Close()
		if err != nil {
			t.Fatalf("detect %s: %v", dir, err)
		}
		for _, p := range d.Projects {
			eco, ok := ecosystemOf[p.Tool]
			if !ok {
				t.Errorf("detection reports tool %q (in %s), which this test and the docs do not know", p.Tool, dir)
				continue
			}
			if !slices.Contains(code, eco) {
				code = append(code, eco)
			}
		}
	}
	list := regexp.MustCompile(`(?s)for 11 ecosystems: (.+?) \(\[`)
	agentYML := list.FindStringSubmatch(read(t, "docs/agent-yml.md"))
	if agentYML == nil {
		t.Fatal("docs/agent-yml.md has no \"for 11 ecosystems: … ([\" list")
	}
	doc := ecosystems(agentYML[1])
	diff(t, "ecosystem", "detection on testdata/repos", "docs/agent-yml.md", code, doc)
	if len(doc) != 11 {
		t.Errorf("docs/agent-yml.md says 11 ecosystems and lists %d: %v", len(doc), doc)
	}
	design := read(t, "docs/design.md")
	for _, e := range doc {
		if !regexp.MustCompile(`\b` + e + `\s+\(`).MatchString(design) {
			t.Errorf("docs/design.md §4.3 does not list %s with its markers", e)
		}
	}
}

// ecosystems splits "Go, Node (npm, pnpm, yarn), Python (pytest), …, and
// Make" into its names.
func ecosystems(list string) []string {
	list = regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(list, "")
	list = strings.ReplaceAll(list, " and ", ", ")
	var out []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// TestWebhookAnswersDocumented: every answer the receiver gives through
// done(status, format, …) is in docs/webhook.md, format verbs and all.
func TestWebhookAnswersDocumented(t *testing.T) {
	page := read(t, "docs/webhook.md")
	var formats []string
	for p, f := range goFiles(t, false) {
		if filepath.Dir(p) != filepath.Join(root, "webhook") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "done" {
				return true
			}
			if lit, ok := call.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					formats = append(formats, s)
				}
			}
			return true
		})
	}
	if len(formats) < 20 {
		t.Fatalf("found only %d answers in webhook/", len(formats))
	}
	for _, s := range formats {
		if s != "%v" && !strings.Contains(page, "`"+s+"`") {
			t.Errorf("the webhook answers %q, which docs/webhook.md does not list", s)
		}
	}
}

// TestRelativeLinksResolve: every relative link in the README, the
// top-level guides and docs/*.md names a file or directory that exists,
// and every #anchor one of its headings (docs/images/ included: a test
// with a browser makes those pictures, and they are committed).
func TestRelativeLinksResolve(t *testing.T) {
	pages := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md", "CHANGELOG.md"}
	names, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, n := range names {
		pages = append(pages, filepath.Join("docs", filepath.Base(n)))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text := read(t, page)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(anchors(read(t, path)), anchor) {
				t.Errorf("%s links to %s, which has no heading #%s", page, target, anchor)
			}
		}
	}
}

// anchors are the GitHub anchors of a page's headings.
func anchors(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?m)^#+ (.+)$").FindAllStringSubmatch(text, -1) {
		a := strings.ToLower(strings.TrimSpace(m[1]))
		a = regexp.MustCompile(`[^\p{L}\p{N} _-]`).ReplaceAllString(a, "")
		out = append(out, strings.ReplaceAll(a, " ", "-"))
	}
	return out
}

// TestReadmeLinksEveryDoc: the README's documentation table reaches
// every page in docs/.
func TestReadmeLinksEveryDoc(t *testing.T) {
	readme := read(t, "README.md")
	names, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, n := range names {
		if link := "](docs/" + filepath.Base(n) + ")"; !strings.Contains(readme, link) {
			t.Errorf("README.md does not link docs/%s", filepath.Base(n))
		}
	}
}
