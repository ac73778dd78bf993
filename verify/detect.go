package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"

	"github.com/patchwright/patchwright/sandbox"
)

// Detection is what Detect found in a repository.
type Detection struct {
	// Checks are grouped by project, each project's cheapest first.
	Checks []Check
	// Languages names each ecosystem found, once: "go", "node",
	// "python", "rust", "java", "ruby", "php", "c".
	Languages []string
	// Missing says, one sentence each, what kind of check could not be
	// found, for the report's "Not verified" section.
	Missing []string
	// GoModule is the module path of the go.mod at the repository root,
	// or "" without one. The report uses it to map packages to
	// directories.
	GoModule string
	// Projects are the projects the checks belong to, root first, then
	// by directory.
	Projects []Project
}

// Project is one directory that is a project of its own in its
// language's terms: a Go module, a package.json (or a workspace member),
// a pytest project, a Cargo package or workspace, a Maven project.
type Project struct {
	// Dir is relative to the repository root in slash form; "." is the
	// root.
	Dir string `json:"dir"`
	// Language is "go", "node", "python", "rust", "java", "ruby", "php"
	// or "c" (C and C++).
	Language string `json:"language"`
	// Tool is how the project is built and tested, as check names show
	// it: "go", "npm", "pnpm", "yarn", "pytest", "cargo", "mvn",
	// "gradle", "rspec", "rake", "minitest", "phpunit", "composer",
	// "cmake", "meson", "make".
	Tool string `json:"tool"`
	// Module is a Go module's path.
	Module string `json:"module,omitempty"`
	// Checks names the project's checks, as in Detection.Checks.
	Checks []string `json:"checks"`
	// Setup is the command that fetches the project's dependencies
	// (`bundle install`, `composer install`, `gradle dependencies`) with
	// the manifests it reads, for dependency setup; nil when the project
	// needs none that detection knows.
	Setup *Setup `json:"setup,omitempty"`
}

// label is how a project qualifies a check name that several projects
// share: "go" at the root, "web: npm" in a subdirectory.
func (p Project) label() string {
	if p.Dir == "." {
		return p.Tool
	}
	return p.Dir + ": " + p.Tool
}

// DetectOptions tune Detect.
type DetectOptions struct {
	// Network says whether checks will run with a network. Default false:
	// the agent phase never has one, so Maven gets -o and Cargo --offline
	// and both use what setup downloaded. (Without -o, Maven on a machine
	// without a network spends its connect timeouts on every artifact
	// whose update policy asks for a check, then fails; with -o it uses
	// the local repository and says plainly what is missing there.)
	Network bool
}

// npmPlaceholderTest is the test script `npm init` writes. It fails
// without testing anything, so it is not a test.
const npmPlaceholderTest = "no test specified"

// maxDepth and maxProjects bound detection on a large monorepo. Projects
// are looked for down to maxDepth directories below the root (deeper
// directories are source trees, not projects: src/main/java/com/…);
// projects past the first maxProjects are listed as not checked instead
// of becoming checks nobody waits for.
const (
	maxDepth    = 5
	maxProjects = 16
)

// skipDirs are never searched for projects: dependencies, build output,
// fixtures that Go and others ignore by rule.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true,
	"out": true, "testdata": true, "__pycache__": true, "venv": true, "site-packages": true,
	"bower_components": true, "third_party": true,
}

// markerNames are the files that make a directory a project.
var markerNames = []string{
	"go.mod", "go.work", "package.json", "pnpm-workspace.yaml",
	"pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py",
	"Cargo.toml", "pom.xml",
	"Gemfile", "Rakefile", "composer.json", "phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml",
	"CMakeLists.txt", "meson.build", "Makefile", "makefile", "GNUmakefile",
	"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
}

// gemspecMarker stands for every *.gemspec file in the tree.
const gemspecMarker = "*.gemspec"

// markerOf returns the name scan records a file under, or "".
func markerOf(name string) string {
	if slices.Contains(markerNames, name) {
		return name
	}
	if strings.HasSuffix(name, ".gemspec") {
		return gemspecMarker
	}
	return ""
}

// tree is which marker files each directory holds.
type tree map[string]map[string]bool

func (t tree) has(dir, name string) bool { return t[dir][name] }

// dirs returns every directory holding one of names, sorted with the root
// first.
func (t tree) dirs(names ...string) []string {
	var out []string
	for dir, files := range t {
		for _, n := range names {
			if files[n] {
				out = append(out, dir)
				break
			}
		}
	}
	slices.SortFunc(out, compareDirs)
	return out
}

func compareDirs(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == ".":
		return -1
	case b == ".":
		return 1
	}
	return strings.Compare(a, b)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// Detect finds verification checks when .github/agent.yml has no
// `verify` list: in the repository root and in each subdirectory that is
// a project of its own (several Go modules or a go.work, npm, pnpm or
// yarn workspaces, a Cargo workspace, nested independent projects), each
// from its language's own markers. It reads files only through ws, so a
// planted symlink cannot point it outside the repository.
func Detect(ws *sandbox.Workspace, opts DetectOptions) (Detection, error) {
	t, err := scan(ws)
	if err != nil {
		return Detection{}, err
	}
	d := &detector{ws: ws, opts: opts, t: t}
	steps := []func() error{d.golang, d.node, d.python, d.rust, d.java, d.ruby, d.php, d.gradle, d.native, d.make}
	for _, step := range steps {
		if err := step(); err != nil {
			return Detection{}, err
		}
	}
	return d.result(), nil
}

// scan finds the marker files of every directory down to maxDepth.
func scan(ws *sandbox.Workspace) (tree, error) {
	t := tree{}
	err := ws.WalkDir(".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, sandbox.ErrPathDenied) || errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if e.IsDir() {
			if p != "." && (skipDirs[e.Name()] || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_")) {
				return fs.SkipDir
			}
			if p != "." && strings.Count(p, "/") >= maxDepth {
				return fs.SkipDir
			}
			return nil
		}
		marker := markerOf(e.Name())
		if marker == "" || !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		dir := path.Dir(p)
		if t[dir] == nil {
			t[dir] = map[string]bool{}
		}
		t[dir][marker] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("detect checks: %w", err)
	}
	return t, nil
}

// detector collects projects and their checks, named plainly; result
// qualifies the names that collide.
type detector struct {
	ws       *sandbox.Workspace
	opts     DetectOptions
	t        tree
	projects []projectChecks
	missing  []string
	goModule string
	skipped  []string
}

type projectChecks struct {
	Project
	checks []Check
}

func (d *detector) add(p Project, checks ...Check) {
	if len(d.projects) >= maxProjects {
		d.skipped = append(d.skipped, p.Dir)
		return
	}
	for i := range checks {
		if checks[i].Why == "" {
			checks[i].Why = toolWhy[p.Tool]
		}
		checks[i].Dir = p.Dir
		checks[i].Run = inDir(p.Dir, checks[i].Run)
	}
	d.projects = append(d.projects, projectChecks{Project: p, checks: checks})
}

// toolWhy says why the checks of the first languages detected run what
// they run; the later ones say it per check.
var toolWhy = map[string]string{
	"go":     "go.mod: the go command, per module",
	"npm":    "package.json's scripts, run with npm (package-lock.json or no other lockfile)",
	"pnpm":   "package.json's scripts, run with pnpm (pnpm-lock.yaml or packageManager)",
	"yarn":   "package.json's scripts, run with yarn (yarn.lock or packageManager)",
	"pytest": "a Python project or pytest configuration file: pytest",
	"cargo":  "Cargo.toml: cargo, offline unless checks have a network",
	"mvn":    "pom.xml: Maven, offline (-o) unless checks have a network",
}

// safeDirRE is what a directory name may hold to be pasted into a shell
// command unquoted; a project elsewhere is reported, not run.
var safeDirRE = regexp.MustCompile(`^[A-Za-z0-9._+@/-]+$`)

func inDir(dir, cmd string) string {
	if dir == "." {
		return cmd
	}
	return "cd " + dir + " && " + cmd
}

// usable says whether a project directory can be named in a command; it
// records the ones that cannot.
func (d *detector) usable(dir, what string) bool {
	if dir == "." || safeDirRE.MatchString(dir) && !slices.Contains(strings.Split(dir, "/"), "..") {
		return true
	}
	d.missing = append(d.missing, fmt.Sprintf("The %s project in %q was not checked: its directory name cannot be used in a command safely.", what, dir))
	return false
}

func (d *detector) read(name string) ([]byte, error) {
	data, err := d.ws.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("detect checks: read %s: %w", name, err)
	}
	return data, nil
}

func (d *detector) result() Detection {
	out := Detection{Missing: d.missing, GoModule: d.goModule}
	count := map[string]int{}
	for _, p := range d.projects {
		for _, c := range p.checks {
			count[c.Name]++
		}
	}
	used := map[string]bool{}
	for _, p := range d.projects {
		if !slices.Contains(out.Languages, p.Language) {
			out.Languages = append(out.Languages, p.Language)
		}
		for _, c := range p.checks {
			if count[c.Name] > 1 {
				c.Name = fmt.Sprintf("%s (%s)", c.Name, p.label())
			}
			base := c.Name
			for i := 2; used[c.Name]; i++ {
				c.Name = fmt.Sprintf("%s #%d", base, i)
			}
			used[c.Name] = true
			c.Project = p.label()
			p.Checks = append(p.Checks, c.Name)
			out.Checks = append(out.Checks, c)
		}
		out.Projects = append(out.Projects, p.Project)
	}
	if len(d.skipped) > 0 {
		out.Missing = append(out.Missing, fmt.Sprintf("Only the first %d projects were checked; %d more were not (%s).", maxProjects, len(d.skipped), strings.Join(d.skipped[:min(3, len(d.skipped))], ", ")))
	}
	if len(out.Checks) == 0 {
		out.Missing = append(out.Missing, "No build or test command was configured in .github/agent.yml or detected (no go.mod, package.json scripts, pytest configuration, Cargo.toml or pom.xml at the repository root).")
	}
	return out
}

// golang adds one build, vet and test per Go module: the modules a root
// go.work uses, or every go.mod. `go build ./...` stops at a nested
// module's boundary, and from a go.work's root it matches nothing, so
// each module is checked in its own directory.
func (d *detector) golang() error {
	mods := d.t.dirs("go.mod")
	if d.t.has(".", "go.work") {
		data, err := d.read("go.work")
		if err != nil {
			return err
		}
		wf, err := modfile.ParseWork("go.work", data, nil)
		if err != nil {
			// The go command refuses a broken go.work too: the checks
			// will say so; check the modules as if it were absent.
			d.missing = append(d.missing, fmt.Sprintf("go.work could not be parsed (%s); each Go module was checked on its own.", oneLine(err.Error())))
			wf = &modfile.WorkFile{}
			for _, m := range mods {
				wf.Use = append(wf.Use, &modfile.Use{Path: m})
			}
		}
		var used []string
		for _, u := range wf.Use {
			dir := path.Clean(strings.TrimPrefix(u.Path, "./"))
			if d.t.has(dir, "go.mod") {
				used = append(used, dir)
			}
		}
		slices.SortFunc(used, compareDirs)
		for _, m := range mods {
			if !slices.Contains(used, m) {
				d.missing = append(d.missing, fmt.Sprintf("The Go module in %s is not in go.work's use list, so it was not checked.", m))
			}
		}
		mods = used
	}
	for _, dir := range mods {
		if !d.usable(dir, "Go") {
			continue
		}
		data, err := d.read(path.Join(dir, "go.mod"))
		if err != nil {
			return err
		}
		module := modfile.ModulePath(data)
		if dir == "." {
			d.goModule = module
		}
		d.add(Project{Dir: dir, Language: "go", Tool: "go", Module: module},
			Check{Name: "build", Run: "go build ./...", Gate: true},
			Check{Name: "vet", Run: "go vet ./..."},
			Check{Name: "test", Run: "go test ./...", Kind: KindGo},
		)
	}
	return nil
}

// packageJSON is the part of package.json detection reads.
type packageJSON struct {
	Scripts        map[string]string `json:"scripts"`
	PackageManager string            `json:"packageManager"`
	Workspaces     json.RawMessage   `json:"workspaces"`
}

func (d *detector) readPackageJSON(dir string) (packageJSON, error) {
	var pkg packageJSON
	name := path.Join(dir, "package.json")
	data, err := d.read(name)
	if err != nil {
		return pkg, err
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return pkg, fmt.Errorf("detect checks: %s is not valid JSON: %w", name, err)
	}
	return pkg, nil
}

// workspaceGlobs returns npm/yarn "workspaces" (a list, or yarn's
// {"packages": [...]}) and pnpm-workspace.yaml's "packages".
func (d *detector) workspaceGlobs(dir string, pkg packageJSON) ([]string, error) {
	var globs []string
	if len(pkg.Workspaces) > 0 {
		if err := json.Unmarshal(pkg.Workspaces, &globs); err != nil {
			var obj struct {
				Packages []string `json:"packages"`
			}
			if err := json.Unmarshal(pkg.Workspaces, &obj); err != nil {
				d.missing = append(d.missing, fmt.Sprintf("%s: workspaces is neither a list nor {\"packages\": [...]}; the workspace's packages were not checked one by one.", path.Join(dir, "package.json")))
			}
			globs = obj.Packages
		}
	}
	if d.t.has(dir, "pnpm-workspace.yaml") {
		data, err := d.read(path.Join(dir, "pnpm-workspace.yaml"))
		if err != nil {
			return nil, err
		}
		var ws struct {
			Packages []string `yaml:"packages"`
		}
		if err := yaml.Unmarshal(data, &ws); err != nil {
			d.missing = append(d.missing, fmt.Sprintf("%s could not be parsed (%s); the workspace's packages were not checked one by one.", path.Join(dir, "pnpm-workspace.yaml"), oneLine(err.Error())))
		}
		globs = append(globs, ws.Packages...)
	}
	return globs, nil
}

// packageManager picks npm, pnpm or yarn from the lockfile, as the
// repository's own CI would, then from package.json's packageManager.
func (d *detector) packageManager(dir string, pkg packageJSON) (string, error) {
	for _, lf := range []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"package-lock.json", "npm"}, {"npm-shrinkwrap.json", "npm"},
	} {
		ok, err := exists(d.ws, path.Join(dir, lf.file))
		if err != nil {
			return "", err
		}
		if ok {
			return lf.pm, nil
		}
	}
	if pm, _, _ := strings.Cut(pkg.PackageManager, "@"); pm == "pnpm" || pm == "yarn" {
		return pm, nil
	}
	return "npm", nil
}

// node adds a project per package.json that is not inside another Node
// project, and per workspace member when the workspace root has no test
// script of its own to run them all.
func (d *detector) node() error {
	var roots []string
	for _, dir := range d.t.dirs("package.json") {
		if !slices.ContainsFunc(roots, func(r string) bool { return within(dir, r) }) {
			roots = append(roots, dir)
		}
	}
	for _, root := range roots {
		pkg, err := d.readPackageJSON(root)
		if err != nil {
			return err
		}
		pm, err := d.packageManager(root, pkg)
		if err != nil {
			return err
		}
		globs, err := d.workspaceGlobs(root, pkg)
		if err != nil {
			return err
		}
		members := d.members(root, globs)
		if len(members) == 0 || testScript(pkg) != "" {
			if d.usable(root, "Node") {
				d.nodeProject(root, pm, pkg, true)
			}
			continue
		}
		for _, m := range members {
			mp, err := d.readPackageJSON(m)
			if err != nil {
				d.missing = append(d.missing, fmt.Sprintf("%s was not checked: %s.", m, oneLine(err.Error())))
				continue
			}
			if d.usable(m, "Node") {
				d.nodeProject(m, pm, mp, false)
			}
		}
	}
	return nil
}

// members returns the directories under root holding a package.json that
// match one of the workspace globs ("packages/*", "apps/**").
func (d *detector) members(root string, globs []string) []string {
	var out []string
	for _, dir := range d.t.dirs("package.json") {
		if dir == root || !within(dir, root) {
			continue
		}
		rel := strings.TrimPrefix(dir, root+"/")
		if root == "." {
			rel = dir
		}
		for _, g := range globs {
			g = strings.TrimSuffix(strings.TrimPrefix(g, "./"), "/")
			if ok, _ := doublestar.Match(g, rel); ok && !strings.HasPrefix(g, "!") {
				out = append(out, dir)
				break
			}
		}
	}
	return out
}

func testScript(pkg packageJSON) string {
	s := pkg.Scripts["test"]
	if strings.Contains(s, npmPlaceholderTest) {
		return ""
	}
	return s
}

func (d *detector) nodeProject(dir, pm string, pkg packageJSON, reportMissing bool) {
	where := "package.json"
	if dir != "." {
		where = dir + "/package.json"
	}
	var checks []Check
	if pkg.Scripts["lint"] != "" {
		checks = append(checks, Check{Name: "lint", Run: pm + " run lint"})
	} else if reportMissing {
		d.missing = append(d.missing, where+" "+noLinterTail)
	}
	if pkg.Scripts["build"] != "" {
		checks = append(checks, Check{Name: "build", Run: pm + " run build", Gate: true})
	}
	switch s := pkg.Scripts["test"]; {
	case s == "":
		d.missing = append(d.missing, where+" has no test script; the JavaScript code was not tested.")
	case strings.Contains(s, npmPlaceholderTest):
		d.missing = append(d.missing, where+"'s test script is npm's placeholder (\"no test specified\"); the JavaScript code was not tested.")
	default:
		checks = append(checks, Check{Name: "test", Run: pm + " test", Kind: scriptKind(pkg.Scripts, s)})
	}
	if len(checks) > 0 {
		d.add(Project{Dir: dir, Language: "node", Tool: pm}, checks...)
	}
}

// runScriptRE finds a script that only runs another script:
// "npm run test:unit", "yarn test:unit", "pnpm run unit".
var runScriptRE = regexp.MustCompile(`^(?:npm run|npm run-script|yarn run|yarn|pnpm run|pnpm) ([A-Za-z0-9:_.-]+)$`)

// scriptKind names the test runner a package.json script runs, following
// one script-to-script hop; "" when it runs something else.
func scriptKind(scripts map[string]string, s string) TestKind {
	if k := kindFromCommand(s); k != "" {
		return k
	}
	if m := runScriptRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		return kindFromCommand(scripts[m[1]])
	}
	return ""
}

// pythonMarkers make a directory a Python project for pytest. A tests/
// folder alone does not: JavaScript projects have them too.
var pythonMarkers = []string{"pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py"}

func (d *detector) python() error {
	for _, dir := range d.outermost(pythonMarkers...) {
		if d.usable(dir, "Python") {
			run := "python -m pytest"
			if m := d.pyTestModule(dir); m != "" {
				run += " " + m
			}
			d.add(Project{Dir: dir, Language: "python", Tool: "pytest"},
				Check{Name: "test", Run: run, Kind: KindPytest})
		}
	}
	return nil
}

// pyTestModules are the names of a project's one test module that
// pytest does not collect by default (its python_files are test_*.py
// and *_test.py) but unittest's discovery does (test*.py), as projects
// that run `python test.py` name it.
var pyTestModules = []string{"test.py", "tests.py"}

// pyTestModule is the test module of the Python project in dir that
// pytest is to be given by name, or "": the project holds test.py or
// tests.py, no file pytest would collect by default, and no pytest
// configuration that sets python_files. Without it pytest collects
// nothing (exit 5) from a project whose tests are all in test.py.
func (d *detector) pyTestModule(dir string) string {
	for _, cfg := range []string{"pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"} {
		if b, err := d.ws.ReadFile(path.Join(dir, cfg)); err == nil && bytes.Contains(b, []byte("python_files")) {
			return ""
		}
	}
	module := ""
	for _, m := range pyTestModules {
		if _, err := d.ws.Stat(path.Join(dir, m)); err == nil {
			module = m
			break
		}
	}
	if module == "" || d.pytestCollects(dir) {
		return ""
	}
	return module
}

// pytestCollects reports whether the tree below dir holds a file pytest
// collects by default (test_*.py, *_test.py), in the directories detection
// scans.
func (d *detector) pytestCollects(dir string) bool {
	found := false
	_ = d.ws.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() {
			if p != dir && (skipDirs[e.Name()] || strings.HasPrefix(e.Name(), ".")) {
				return fs.SkipDir
			}
			return nil
		}
		n := e.Name()
		if strings.HasSuffix(n, ".py") && (strings.HasPrefix(n, "test_") || strings.HasSuffix(n, "_test.py")) {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// outermost returns the directories holding one of names that are not
// below another such directory: a nested Cargo.toml is a workspace member
// or a path dependency, a nested pom.xml a module, a nested conftest.py
// part of the project above it.
func (d *detector) outermost(names ...string) []string {
	var out []string
	for _, dir := range d.t.dirs(names...) {
		if !slices.ContainsFunc(out, func(r string) bool { return within(dir, r) }) {
			out = append(out, dir)
		}
	}
	return out
}

// cargoWorkspaceRE finds a [workspace] table in Cargo.toml.
var cargoWorkspaceRE = regexp.MustCompile(`(?m)^\s*\[workspace\]\s*(#.*)?$`)

func (d *detector) rust() error {
	offline := ""
	if !d.opts.Network {
		offline = " --offline"
	}
	for _, dir := range d.outermost("Cargo.toml") {
		if !d.usable(dir, "Rust") {
			continue
		}
		data, err := d.read(path.Join(dir, "Cargo.toml"))
		if err != nil {
			return err
		}
		all := ""
		if cargoWorkspaceRE.Match(data) {
			all = " --workspace" // a root package alone would leave the members untested
		}
		d.add(Project{Dir: dir, Language: "rust", Tool: "cargo"},
			Check{Name: "build", Run: "cargo build" + all + offline, Gate: true},
			Check{Name: "test", Run: "cargo test" + all + offline, Kind: KindCargo},
		)
	}
	return nil
}

func (d *detector) java() error {
	cmd := "mvn -q -B test"
	if !d.opts.Network {
		cmd = "mvn -q -B -o test"
	}
	for _, dir := range d.outermost("pom.xml") {
		if d.usable(dir, "Java") {
			d.add(Project{Dir: dir, Language: "java", Tool: "mvn"}, Check{Name: "test", Run: cmd, Kind: KindMaven})
		}
	}
	return nil
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

// Configured makes the Check for one entry of .github/agent.yml's
// `verify` list. A check named "build" or "compile" is a gate.
func Configured(name, run string) Check {
	n := strings.ToLower(name)
	return Check{Name: name, Run: run, Gate: n == "build" || n == "compile"}
}

// Configured is the package-level Configured, with the test runner
// detection found for the same command: a configured `npm test` in a
// mocha project has its summary parsed like the detected one.
func (d Detection) Configured(name, run string) Check {
	c := Configured(name, run)
	for _, dc := range d.Checks {
		if strings.TrimSpace(dc.Run) == strings.TrimSpace(run) {
			c.Kind = dc.Kind
			break
		}
	}
	return c
}
