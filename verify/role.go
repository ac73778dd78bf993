package verify

import (
	"regexp"
	"strings"
)

// Role is what a check establishes about a change. Detection names its
// checks by role ("test", "vet", "build (web: npm)"); a configured check
// is known by its name or its command. The report asks here, so one rule
// decides what a check is.
type Role string

// The roles of a check.
const (
	RoleTest  Role = "test"
	RoleLint  Role = "lint" // a linter or static analyser: go vet counts
	RoleBuild Role = "build"
	RoleOther Role = ""
)

// lintRE matches a linter or static analyser as a word of the command.
var lintRE = regexp.MustCompile(`(^|[\s;&|(/])(go vet|golangci-lint|staticcheck|gofmt -l|eslint|biome (lint|check)|ruff|flake8|pylint|mypy|rubocop|phpstan|psalm|phpcs|cargo (\+\S+ )?(clippy|fmt --check)|clang-tidy|cppcheck|shellcheck|(npm|pnpm|yarn)( run)? lint)(\s|$)`)

// buildRE matches a build or compile step as a word of the command.
var buildRE = regexp.MustCompile(`(^|[\s;&|(/])(go build|cargo (\+\S+ )?(build|check)|(mvn|mvnw)(\s.*)?\s(compile|package)|(gradle|gradlew)(\s.*)?\s(assemble|build)|(npm|pnpm|yarn)( run)? build|tsc|cmake --build|meson compile|ninja|make)(\s|$)`)

// RoleOf says what the check that ran command under name establishes: a
// test run when its runner is one verify reads (KindOf) or its name says
// test, else a linter, else a build; RoleOther for anything else.
func RoleOf(name, command string) Role {
	label := strings.ToLower(strings.Fields(name + " x")[0])
	switch {
	case kindFromCommand(command) != "" || scriptLanguage(command) != "" || strings.HasPrefix(label, "test"):
		return RoleTest
	case strings.Contains(label, "lint") || label == "vet" || lintRE.MatchString(command):
		return RoleLint
	case label == "build" || label == "compile" || buildRE.MatchString(command):
		return RoleBuild
	}
	return RoleOther
}

// Role is RoleOf the result's check; a result whose output a test
// runner's parser read is a test run whatever its name.
func (c CheckResult) Role() Role {
	if c.Summary != nil && c.Summary.Kind != "" {
		return RoleTest
	}
	return RoleOf(c.Name, c.Command)
}

// Languages of TestLanguage, as a report names them.
const (
	LanguageGo     = "Go"
	LanguageJS     = "JavaScript/TypeScript"
	LanguagePython = "Python"
	LanguageRust   = "Rust"
	LanguageJava   = "Java"
	LanguageRuby   = "Ruby"
	LanguagePHP    = "PHP"
	LanguageC      = "C/C++"
)

var kindLanguage = map[TestKind]string{
	KindGo: LanguageGo, KindPytest: LanguagePython, KindTAP: LanguageJS, KindNodeTest: LanguageJS,
	KindMocha: LanguageJS, KindJest: LanguageJS, KindVitest: LanguageJS, KindCargo: LanguageRust,
	KindMaven: LanguageJava, KindGradle: LanguageJava, KindRSpec: LanguageRuby, KindMinitest: LanguageRuby, KindTestUnit: LanguageRuby,
	KindPHPUnit: LanguagePHP, KindCTest: LanguageC, KindMeson: LanguageC,
}

// TestLanguage is the language whose tests the result's run executed, by
// its runner (the parser's, else the command's); "" when the runner is
// none verify knows (`make test`, a script).
func (c CheckResult) TestLanguage() string {
	k := kindFromCommand(c.Command)
	if c.Summary != nil && c.Summary.Kind != "" {
		k = c.Summary.Kind
	}
	if lang := kindLanguage[k]; lang != "" {
		return lang
	}
	return scriptLanguage(c.Command)
}

func scriptLanguage(command string) string {
	for _, s := range scriptLanguages {
		if s.re.MatchString(command) {
			return s.lang
		}
	}
	return ""
}

// noLinterTail ends the sentence of Detection.Missing that says a
// project has no linter.
const noLinterTail = "has no lint script; style was not checked."

// SaysNoLinter reports whether a sentence of Detection.Missing already
// says that no linter was found.
func SaysNoLinter(sentence string) bool { return strings.HasSuffix(sentence, noLinterTail) }

// scriptLanguages are test commands whose runner verify does not read
// but whose language is plain: a package manager's test script runs
// JavaScript's tests whatever runner it names.
var scriptLanguages = []struct {
	re   *regexp.Regexp
	lang string
}{
	{regexp.MustCompile(`(^|[\s;&|(/])(npm|pnpm|yarn)( run)? test(\s|$)`), LanguageJS},
	{regexp.MustCompile(`(^|[\s;&|(/])(python[0-9.]* -m unittest|tox|nox)(\s|$)`), LanguagePython},
}
