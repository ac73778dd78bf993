package findings

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/modfile"
)

// maxPerFile caps the dependency findings of one file; a larger change is
// summarized in one more finding, so a lockfile regenerated from scratch
// does not bury the rest of the report.
const maxPerFile = 20

// dep is one dependency a manifest or lockfile names.
type dep struct {
	// Name is what a reviewer searches the registry for.
	Name    string
	Version string
	// Line is 1-based in the file, 0 when unknown.
	Line int
	// ReplacedBy is set for a go.mod replace: the module's code now comes
	// from there.
	ReplacedBy string
}

// depFile reads one kind of manifest or lockfile. Its deps are keyed so a
// change of version is a bump and a new key is an addition.
type depFile struct {
	// what names the dependency kind in a sentence: "Go module".
	what string
	// lock is true for lockfiles: their entries are keyed by name and
	// version, and entries the manifests already report are left out.
	lock bool
	read func(src []byte) map[string]dep
}

// IsRequirements reports whether the slash-separated path p is a pip
// requirements file: requirements*.txt, *-requirements.txt
// (test-requirements.txt), or any .txt file in a directory named
// requirements (requirements/dev.txt), as projects that split them name
// them.
func IsRequirements(p string) bool {
	base := path.Base(p)
	if !strings.HasSuffix(base, ".txt") {
		return false
	}
	return strings.HasPrefix(base, "requirements") || strings.HasSuffix(base, "-requirements.txt") ||
		path.Base(path.Dir(p)) == "requirements"
}

// depFileOf returns the reader for a path, or nil.
func depFileOf(p string) *depFile {
	base := path.Base(p)
	switch {
	case base == "go.mod":
		return &depFile{what: "Go module", read: goModDeps}
	case base == "go.sum":
		return &depFile{what: "Go module", lock: true, read: goSumDeps}
	case base == "package.json":
		return &depFile{what: "npm package", read: packageJSONDeps}
	case base == "package-lock.json", base == "npm-shrinkwrap.json":
		return &depFile{what: "npm package", lock: true, read: npmLockDeps}
	case base == "yarn.lock":
		return &depFile{what: "npm package", lock: true, read: yarnLockDeps}
	case base == "pnpm-lock.yaml":
		return &depFile{what: "npm package", lock: true, read: pnpmLockDeps}
	case IsRequirements(p), strings.HasPrefix(base, "constraints") && strings.HasSuffix(base, ".txt"):
		return &depFile{what: "Python package", read: requirementsDeps}
	case base == "pyproject.toml":
		return &depFile{what: "Python package", read: pyprojectDeps}
	case base == "poetry.lock", base == "uv.lock", base == "pdm.lock":
		return &depFile{what: "Python package", lock: true, read: tomlPackagesDeps(false)}
	case base == "Pipfile.lock":
		return &depFile{what: "Python package", lock: true, read: pipfileLockDeps}
	case base == "Cargo.toml":
		return &depFile{what: "crate", read: cargoDeps}
	case base == "Cargo.lock":
		return &depFile{what: "crate", lock: true, read: tomlPackagesDeps(true)}
	case base == "pom.xml":
		return &depFile{what: "Maven artifact", read: pomDeps}
	case base == "Gemfile", strings.HasSuffix(base, ".gemspec"):
		return &depFile{what: "gem", read: gemfileDeps}
	case base == "Gemfile.lock":
		return &depFile{what: "gem", lock: true, read: gemLockDeps}
	case base == "composer.json":
		return &depFile{what: "Composer package", read: composerJSONDeps}
	case base == "composer.lock":
		return &depFile{what: "Composer package", lock: true, read: composerLockDeps}
	case base == "build.gradle", base == "build.gradle.kts":
		return &depFile{what: "Gradle dependency", read: gradleDeps}
	}
	return nil
}

// dependencyFindings lists every dependency added or re-versioned, by
// name and version, manifests first; lockfile entries for names a
// manifest finding already gave are left out.
//
// A dependency the issue names is listed all the same (the reviewer
// checks that it is the package the issue meant); its sentence says so.
func dependencyFindings(files []File, issue string) []Finding {
	issue = strings.ToLower(issue)
	var out []Finding
	named := map[string]bool{}
	eachDepFile(files, func(f File, df *depFile) {
		out = append(out, depFindings(f, df, named, issue)...)
	})
	return out
}

// eachDepFile calls fn for each manifest among files that exists after the
// change, then for each lockfile, so that lockfile entries can leave out
// the names a manifest gave.
func eachDepFile(files []File, fn func(File, *depFile)) {
	for _, lock := range []bool{false, true} {
		for _, f := range files {
			if df := depFileOf(f.Path); df != nil && df.lock == lock && f.New != nil {
				fn(f, df)
			}
		}
	}
}

// depChange is one dependency a file adds (had false) or re-versions.
type depChange struct {
	d, was dep
	had    bool
}

// depChanges lists what f's new version adds or re-versions, by key.
func depChanges(f File, df *depFile) []depChange {
	before, after := map[string]dep{}, df.read(f.New)
	if f.Base != nil {
		before = df.read(f.Base)
	}
	var out []depChange
	for _, k := range slices.Sorted(maps.Keys(after)) {
		d := after[k]
		was, had := before[k]
		if !had || was.Version != d.Version {
			out = append(out, depChange{d, was, had})
		}
	}
	return out
}

// IsManifest reports whether the slash-separated path p is a dependency
// manifest or lockfile of a known ecosystem (go.mod, go.sum,
// package.json and its lockfiles, requirements files (IsRequirements), pyproject.toml and
// Python lockfiles, Cargo.toml, Cargo.lock, pom.xml): the files whose
// change means the change needs dependency setup.
func IsManifest(p string) bool { return depFileOf(p) != nil }

// Dependency is one dependency a change adds or re-versions.
type Dependency struct {
	// Path is the manifest or lockfile that names it.
	Path string
	// What is its kind in words: "Go module", "npm package", "crate"…
	What    string
	Name    string
	Version string
	// Was is the version before the change; "" for a new dependency.
	Was string
	// Line is where Path names it, 1-based; 0 when unknown.
	Line int
}

// ChangedDependencies lists the dependencies the manifests and lockfiles
// among files add or re-version, file by file, in the order of files;
// lockfile entries for names a manifest already gave are left out.
func ChangedDependencies(files []File) []Dependency {
	var out []Dependency
	named := map[string]bool{}
	eachDepFile(files, func(f File, df *depFile) {
		for _, c := range depChanges(f, df) {
			if df.lock && named[c.d.Name] {
				continue
			}
			named[c.d.Name] = true
			out = append(out, Dependency{Path: f.Path, What: df.what, Name: c.d.Name, Version: c.d.Version, Was: c.was.Version, Line: c.d.Line})
		}
	})
	return out
}

func depFindings(f File, df *depFile, named map[string]bool, issue string) []Finding {
	var out []Finding
	extra := 0
	for _, c := range depChanges(f, df) {
		d, was, had := c.d, c.was, c.had
		if df.lock && named[d.Name] {
			continue
		}
		if !df.lock {
			named[d.Name] = true
		}
		if len(out) == maxPerFile {
			extra++
			continue
		}
		out = append(out, depFinding(f.Path, df, d, was, had, namesDep(issue, d.Name)))
	}
	if extra > 0 {
		out = append(out, Finding{Kind: NewDependency, Path: f.Path, Detail: fmt.Sprintf(
			"%s adds or changes %d more dependencies than are listed here; review its diff for each name.", f.Path, extra)})
	}
	return out
}

// namesDep reports whether issue text (lower case) names a dependency as
// a whole word.
func namesDep(issue, name string) bool {
	return name != "" && regexp.MustCompile(`(^|[^\w./-])`+regexp.QuoteMeta(strings.ToLower(name))+`($|[^\w/-])`).MatchString(issue)
}

func depFinding(p string, df *depFile, d, was dep, had, asked bool) Finding {
	f := Finding{Kind: NewDependency, Path: p, Line: d.Line}
	switch {
	case asked && had:
		f.Detail = fmt.Sprintf("The %s %s, which the issue names, changes from %s to %s; the new version still brings in code nobody on this project has reviewed.",
			df.what, d.Name, orNone(was.Version), orNone(d.Version))
	case asked:
		f.Detail = fmt.Sprintf("The change adds the %s %s %s, which the issue names; check it is that package and not a look-alike.",
			df.what, d.Name, orNone(d.Version))
	case d.ReplacedBy != "":
		f.Detail = fmt.Sprintf("%s now replaces %s with %s, so the build compiles that code instead; check the replacement is trusted.", p, d.Name, d.ReplacedBy)
	case had:
		f.Detail = fmt.Sprintf("The %s %s changes from %s to %s, which brings in code nobody on this project has reviewed; check the new version is wanted.",
			df.what, d.Name, orNone(was.Version), orNone(d.Version))
	case df.lock:
		f.Detail = fmt.Sprintf("%s now pins the %s %s %s, code that comes with the change; check the name is one the project means to depend on.",
			p, df.what, d.Name, orNone(d.Version))
	default:
		f.Detail = fmt.Sprintf("The change adds the %s %s %s, code nobody on this project has reviewed; check the name is the intended one and not a look-alike.",
			df.what, d.Name, orNone(d.Version))
	}
	return f
}

func orNone(v string) string {
	if v == "" {
		return "(no version)"
	}
	return v
}

// --- Go ---

func goModDeps(src []byte) map[string]dep {
	// Parse, not ParseLax: ParseLax ignores replace directives, and a
	// replace that points a module at a fork is the change to see.
	f, err := modfile.Parse("go.mod", src, nil)
	if err != nil {
		return nil
	}
	out := map[string]dep{}
	for _, r := range f.Require {
		out[r.Mod.Path] = dep{Name: r.Mod.Path, Version: r.Mod.Version, Line: r.Syntax.Start.Line}
	}
	for _, r := range f.Replace {
		to := r.New.Path
		if r.New.Version != "" {
			to += " " + r.New.Version
		}
		out["replace "+r.Old.String()] = dep{Name: r.Old.String(), Version: to, ReplacedBy: to, Line: r.Syntax.Start.Line}
	}
	for _, t := range f.Tool {
		out["tool "+t.Path] = dep{Name: t.Path + " (tool)", Line: t.Syntax.Start.Line}
	}
	return out
}

// goSumDeps reads go.sum's module lines; the /go.mod lines only fetch
// module graphs, not code.
func goSumDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	n := 0
	for l := range strings.Lines(string(src)) {
		n++
		f := strings.Fields(l)
		if len(f) != 3 || strings.HasSuffix(f[1], "/go.mod") {
			continue
		}
		out[f[0]+"@"+f[1]] = dep{Name: f[0], Version: f[1], Line: n}
	}
	return out
}

// --- npm ---

func packageJSONDeps(src []byte) map[string]dep {
	var pkg map[string]json.RawMessage
	if json.Unmarshal(src, &pkg) != nil {
		return nil
	}
	out := map[string]dep{}
	for _, section := range []string{"dependencies", "devDependencies", "peerDependencies", "optionalDependencies"} {
		var deps map[string]string
		if json.Unmarshal(pkg[section], &deps) != nil {
			continue
		}
		for name, v := range deps {
			out[section+"/"+name] = dep{Name: name, Version: v, Line: jsonLine(src, section, name)}
		}
	}
	return out
}

// jsonLine finds the line of "key": after the line of "section":, or 0.
func jsonLine(src []byte, section, key string) int {
	n, in := 0, section == ""
	for l := range strings.Lines(string(src)) {
		n++
		if !in {
			in = strings.Contains(l, `"`+section+`"`)
			continue
		}
		if strings.Contains(l, `"`+key+`"`) {
			return n
		}
	}
	return 0
}

func npmLockDeps(src []byte) map[string]dep {
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
		Dependencies map[string]npmLockV1 `json:"dependencies"`
	}
	if json.Unmarshal(src, &lock) != nil {
		return nil
	}
	out := map[string]dep{}
	for key, p := range lock.Packages {
		i := strings.LastIndex(key, "node_modules/")
		if i < 0 {
			continue // the root package, or a workspace folder
		}
		name := key[i+len("node_modules/"):]
		out[name+"@"+p.Version] = dep{Name: name, Version: p.Version, Line: jsonLine(src, "", key)}
	}
	if len(lock.Packages) == 0 {
		npmLockV1Deps(src, lock.Dependencies, out)
	}
	return out
}

// npmLockV1 is an entry of lockfileVersion 1, nested by dependency.
type npmLockV1 struct {
	Version      string               `json:"version"`
	Dependencies map[string]npmLockV1 `json:"dependencies"`
}

func npmLockV1Deps(src []byte, deps map[string]npmLockV1, out map[string]dep) {
	for name, d := range deps {
		out[name+"@"+d.Version] = dep{Name: name, Version: d.Version, Line: jsonLine(src, "", name)}
		npmLockV1Deps(src, d.Dependencies, out)
	}
}

// yarnLockDeps reads yarn.lock, classic (`version "1.2.3"`) and Berry
// (`version: 1.2.3`): an unindented header of specs, then the resolved
// version indented below it.
func yarnLockDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	var names []string
	header := 0
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case !strings.HasPrefix(l, " ") && strings.HasSuffix(l, ":"):
			names, header = yarnNames(strings.TrimSuffix(l, ":")), n
		case names != nil && strings.HasPrefix(strings.TrimSpace(l), "version"):
			v := strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "version")), `:" `)
			for _, name := range names {
				out[name+"@"+v] = dep{Name: name, Version: v, Line: header}
			}
			names = nil
		}
	}
	return out
}

// yarnNames returns the package names of a header such as
// `"@babel/core@^7.0.0", "@babel/core@npm:^7.1.0"`.
func yarnNames(header string) []string {
	var out []string
	for _, spec := range strings.Split(header, ",") {
		spec = strings.Trim(strings.TrimSpace(spec), `"`)
		if i := strings.LastIndex(spec, "@"); i > 0 {
			spec = spec[:i]
		}
		if spec == "__metadata" || spec == "" || slices.Contains(out, spec) {
			continue
		}
		out = append(out, spec)
	}
	return out
}

// pnpmKey splits a package key into name and version, dropping peers:
// `(…)` from v6 on, `_…` in v5.
var pnpmKey = regexp.MustCompile(`^((?:@[^/@]+/)?[^@/]+)[@/]([^_(]+)`)

// pnpmLockDeps reads the keys of pnpm-lock.yaml's packages: `/name@1.2.3`
// (v6), `name@1.2.3` (v9) or `/name/1.2.3` (v5), with peer suffixes.
func pnpmLockDeps(src []byte) map[string]dep {
	var lock struct {
		Packages yaml.Node `yaml:"packages"`
	}
	if yaml.Unmarshal(src, &lock) != nil || lock.Packages.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string]dep{}
	for i := 0; i+1 < len(lock.Packages.Content); i += 2 {
		k := lock.Packages.Content[i]
		m := pnpmKey.FindStringSubmatch(strings.TrimPrefix(k.Value, "/"))
		if m == nil {
			continue
		}
		name, version := m[1], m[2]
		out[name+"@"+version] = dep{Name: name, Version: version, Line: k.Line}
	}
	return out
}

// --- Python ---

// --- Rust ---

func cargoDeps(src []byte) map[string]dep {
	var doc map[string]any
	if toml.Unmarshal(src, &doc) != nil {
		return nil
	}
	out := map[string]dep{}
	sections := func(prefix string, m map[string]any) {
		for _, s := range []string{"dependencies", "dev-dependencies", "build-dependencies"} {
			deps, _ := m[s].(map[string]any)
			for name, v := range deps {
				real := name
				if t, ok := v.(map[string]any); ok {
					if p, ok := t["package"].(string); ok {
						real = p // a renamed dependency is fetched by its package name
					}
				}
				out[prefix+s+"/"+name] = dep{Name: real, Version: tableVersion(v), Line: lineOfWord(src, name)}
			}
		}
	}
	sections("", doc)
	if ws, ok := doc["workspace"].(map[string]any); ok {
		sections("workspace/", ws)
	}
	if targets, ok := doc["target"].(map[string]any); ok {
		for t, v := range targets {
			if m, ok := v.(map[string]any); ok {
				sections("target/"+t+"/", m)
			}
		}
	}
	return out
}

// --- Maven ---

// pomDeps reads dependencies, plugins, extensions and the parent, where
// they are declared (managed versions included).
func pomDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	var visit func(prefix string, n *xnode)
	visit = func(prefix string, n *xnode) {
		for _, k := range n.kids {
			switch k.name {
			case "dependency", "plugin", "extension", "parent":
				if a := k.child("artifactId"); a != "" {
					name := strings.TrimPrefix(k.child("groupId")+":"+a, ":")
					out[prefix+k.name+"/"+name] = dep{Name: name, Version: k.child("version"), Line: k.line}
				}
			}
			visit(prefix+k.name+"/", k)
		}
	}
	visit("", parseXML(src))
	return out
}

// DeclaresDependencies reports whether the manifest p (slash-separated,
// its content src) declares a dependency that setup would fetch: a
// go.mod require not replaced by a local directory, a package.json
// dependency of any section, a requirement line, a pyproject.toml project
// or Poetry dependency (not build-system.requires: the build backend
// alone is not the project's dependencies), a Cargo.toml dependency, a
// Gemfile gem, a Composer package (not the platform). Lockfiles and
// unknown files declare none.
func DeclaresDependencies(p string, src []byte) bool {
	df := depFileOf(p)
	if df == nil || df.lock {
		return false
	}
	deps := df.read(src)
	for k := range deps {
		switch {
		case strings.HasPrefix(k, "build-system/"), strings.HasPrefix(k, "replace "), strings.HasPrefix(k, "tool "):
		case localReplace(deps, k):
		default:
			return true
		}
	}
	return false
}

// localReplace reports whether the go.mod require k is replaced by a
// directory (replace m => ../lib): nothing to download.
func localReplace(deps map[string]dep, k string) bool {
	for rk, r := range deps {
		old, ok := strings.CutPrefix(rk, "replace ")
		if !ok || (old != k && !strings.HasPrefix(old, k+"@")) {
			continue
		}
		if strings.HasPrefix(r.ReplacedBy, ".") || strings.HasPrefix(r.ReplacedBy, "/") {
			return true
		}
	}
	return false
}
