package findings

import (
	"strings"
	"testing"
)

// TestAdvisoryChecksRanges: a version the manifest writes as a range is
// sent to the advisory database as the one version the lockfile beside
// it holds, else as the range's lower bound, and never as written.
func TestAdvisoryChecksRanges(t *testing.T) {
	npmLock := func(versions ...string) string {
		var b strings.Builder
		b.WriteString(`{"lockfileVersion":3,"packages":{"":{"name":"app"}`)
		for i, v := range versions {
			b.WriteString(`,"` + strings.Repeat("node_modules/x/", i) + `node_modules/lodash":{"version":"` + v + `"}`)
		}
		b.WriteString("}}\n")
		return b.String()
	}
	pkg := func(v string) string { return `{"dependencies":{"lodash":"` + v + `"}}` }
	cases := []struct {
		name    string
		files   map[string]string
		want    string // the query's version
		isRange bool
		locked  bool
	}{
		{"npm exact", map[string]string{"package.json": pkg("4.17.20")}, "4.17.20", false, false},
		{"npm =exact", map[string]string{"package.json": pkg("=4.17.20")}, "4.17.20", false, false},
		{"npm caret, locked", map[string]string{"package.json": pkg("^4.17.0"), "package-lock.json": npmLock("4.17.21")}, "4.17.21", true, true},
		{"npm caret, no lock", map[string]string{"package.json": pkg("^4.17.0")}, "4.17.0", true, false},
		{"npm tilde, short", map[string]string{"package.json": pkg("~4.17")}, "4.17.0", true, false},
		{"npm x-range", map[string]string{"package.json": pkg("4.x")}, "4.0.0", true, false},
		{"npm hyphen range", map[string]string{"package.json": pkg("4.1.0 - 4.17.0")}, "4.1.0", true, false},
		{"npm upper bound only", map[string]string{"package.json": pkg("<5")}, "", true, false},
		{"npm star", map[string]string{"package.json": pkg("*")}, "", true, false},
		{"npm two locked versions", map[string]string{"package.json": pkg("^4.0.0"), "package-lock.json": npmLock("4.17.21", "4.0.1")}, "4.0.0", true, false},
		{"npm lockfile elsewhere", map[string]string{"package.json": pkg("^4.17.0"), "web/package-lock.json": npmLock("4.17.21")}, "4.17.0", true, false},
		{"pip exact", map[string]string{"requirements.txt": "requests==2.31.0\n"}, "2.31.0", false, false},
		{"pip compatible", map[string]string{"requirements.txt": "requests~=2.1\n"}, "2.1", true, false},
		{"pip two bounds", map[string]string{"requirements.txt": "requests>=1,<2\n"}, "1", true, false},
		{"pip upper first", map[string]string{"requirements.txt": "requests<3,>=2.5\n"}, "2.5", true, false},
		{"pip wildcard", map[string]string{"requirements.txt": "requests==2.*\n"}, "2.0", true, false},
		{"pip no version", map[string]string{"requirements.txt": "requests\n"}, "", true, false},
		{"pip locked by poetry", map[string]string{"pyproject.toml": "[project]\nname = \"app\"\ndependencies = [\"Requests>=2.0\"]\n",
			"poetry.lock": "[[package]]\nname = \"requests\"\nversion = \"2.31.0\"\n"}, "2.31.0", true, true},
		{"crate bare is caret", map[string]string{"Cargo.toml": "[dependencies]\nserde = \"1.0\"\n"}, "1.0.0", true, false},
		{"crate locked", map[string]string{"Cargo.toml": "[dependencies]\nserde = \"1.0\"\n",
			"Cargo.lock": "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.188\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"}, "1.0.188", true, true},
		{"crate exact", map[string]string{"Cargo.toml": "[dependencies]\nserde = \"=1.0.100\"\n"}, "1.0.100", false, false},
		{"gem pessimistic", map[string]string{"Gemfile": "gem \"rails\", \"~> 7.0\"\n"}, "7.0", true, false},
		{"gem locked", map[string]string{"Gemfile": "gem \"rails\", \">= 7.0, < 8\"\n",
			"Gemfile.lock": "GEM\n  remote: https://rubygems.org/\n  specs:\n    rails (7.1.2)\n"}, "7.1.2", true, true},
		{"composer caret", map[string]string{"composer.json": `{"require":{"monolog/monolog":"^2.0"}}`}, "2.0.0", true, false},
		{"composer locked", map[string]string{"composer.json": `{"require":{"monolog/monolog":"^2.0 || ^3.0"}}`,
			"composer.lock": `{"packages":[{"name":"monolog/monolog","version":"3.5.0"}]}`}, "3.5.0", true, true},
		{"maven exact", map[string]string{"pom.xml": pom("31.1-jre")}, "31.1-jre", false, false},
		{"maven range", map[string]string{"pom.xml": pom("[30.0,32.0)")}, "30.0", true, false},
		{"maven range, no lower bound", map[string]string{"pom.xml": pom("(,32.0]")}, "", true, false},
		{"gradle dynamic", map[string]string{"build.gradle": "dependencies {\n  implementation 'com.google.guava:guava:31.+'\n}\n"}, "31", true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var files []File
			for p, src := range c.files {
				files = append(files, File{Path: p, New: []byte(src)})
			}
			checks := AdvisoryChecks(files)
			if len(checks) != 1 {
				t.Fatalf("%d checks %+v; want 1", len(checks), checks)
			}
			got := checks[0]
			if got.Query.Version != c.want || got.IsRange != c.isRange || got.Locked != c.locked {
				t.Errorf("version %q, range %v (%q), locked %v; want %q, %v, %v", got.Query.Version, got.IsRange, got.Range, got.Locked, c.want, c.isRange, c.locked)
			}
		})
	}
}

func pom(version string) string {
	return "<project><dependencies><dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId><version>" +
		version + "</version></dependency></dependencies></project>\n"
}

// TestAdvisoryCheckFinding: an advisory found for a range says which
// version was looked up and why; one for a version says nothing more.
func TestAdvisoryCheckFinding(t *testing.T) {
	adv := KnownAdvisory{ID: "GHSA-x", Severity: "high", Summary: "Prototype pollution"}
	d := Dependency{Path: "package.json", What: "npm package", Name: "lodash", Line: 1}
	cases := []struct {
		check AdvisoryCheck
		want  string
	}{
		{AdvisoryCheck{Dependency: withVersion(d, "4.17.20"), Query: AdvisoryQuery{Version: "4.17.20"}}, "Prototype pollution"},
		{AdvisoryCheck{Dependency: withVersion(d, "^4.17.0"), Query: AdvisoryQuery{Version: "4.17.21"}, IsRange: true, Range: "^4.17.0", Locked: true},
			"(the manifest gives a range, `^4.17.0`; the version looked up is 4.17.21, the one its lockfile holds)"},
		{AdvisoryCheck{Dependency: withVersion(d, "^4.17.0"), Query: AdvisoryQuery{Version: "4.17.0"}, IsRange: true, Range: "^4.17.0"},
			"(the manifest gives a range, `^4.17.0` and no lockfile beside it holds one version; the version looked up is 4.17.0, its lower bound)"},
		{AdvisoryCheck{Dependency: d, IsRange: true},
			"(the manifest gives no version, with no lower bound, and no lockfile beside it holds one version; every version was looked up)"},
	}
	for _, c := range cases {
		f := c.check.Finding(adv)
		if f.Kind != Advisory || !strings.HasSuffix(f.Detail, c.want) {
			t.Errorf("finding %s %q; want an advisory ending %q", f.Kind, f.Detail, c.want)
		}
	}
}

func withVersion(d Dependency, v string) Dependency { d.Version = v; return d }
