package verify

import "testing"

func TestRoleOf(t *testing.T) {
	for _, tc := range []struct {
		name, command string
		want          Role
	}{
		{"test", "go test ./...", RoleTest},
		{"test (web: npm)", "node --test", RoleTest},
		{"unit", "node --test test/", RoleTest},
		{"check", "npm test", RoleTest},
		{"check", "tox -e py312", RoleTest},
		{"test", "make test", RoleTest}, // named test: a test run, language unknown
		{"vet", "go vet ./...", RoleLint},
		{"static", "go vet ./...", RoleLint},
		{"lint", "npm run lint", RoleLint},
		{"style", "ruff check .", RoleLint},
		{"clippy", "cargo clippy -- -D warnings", RoleLint},
		{"build", "go build ./...", RoleBuild},
		{"compile", "tsc -p .", RoleBuild},
		{"all", "cmake --build build", RoleBuild},
		{"cargo check", "cargo check", RoleBuild},
		{"docs", "mkdocs build --strict", RoleOther},
		{"latest", "echo contest", RoleOther}, // "test" inside a word is no test
	} {
		if got := RoleOf(tc.name, tc.command); got != tc.want {
			t.Errorf("RoleOf(%q, %q) = %q, want %q", tc.name, tc.command, got, tc.want)
		}
	}
}

func TestTestLanguage(t *testing.T) {
	for _, tc := range []struct {
		c    CheckResult
		want string
	}{
		{CheckResult{Name: "test", Command: "node --test"}, LanguageJS},
		{CheckResult{Name: "test", Command: "npm test"}, LanguageJS},
		{CheckResult{Name: "test", Command: "go test ./..."}, LanguageGo},
		{CheckResult{Name: "test", Command: "python -m pytest"}, LanguagePython},
		{CheckResult{Name: "test", Command: "python3 -m unittest discover"}, LanguagePython},
		{CheckResult{Name: "test", Command: "bundle exec rake test"}, LanguageRuby},
		{CheckResult{Name: "test", Command: "rake spec"}, LanguageRuby}, // roda's minitest specs
		{CheckResult{Name: "test", Command: "./run-tests.sh", Summary: &TestSummary{Kind: KindNodeTest}}, LanguageJS},
		{CheckResult{Name: "test", Command: "make test"}, ""},
		{CheckResult{Name: "vet", Command: "go vet ./..."}, ""},
	} {
		if got := tc.c.TestLanguage(); got != tc.want {
			t.Errorf("TestLanguage(%q) = %q, want %q", tc.c.Command, got, tc.want)
		}
	}
}
