package findings

import "testing"

// TestDeclaresDependencies: what decides whether a detected first setup
// runs for a manifest.
func TestDeclaresDependencies(t *testing.T) {
	for _, tc := range []struct {
		path, src string
		want      bool
	}{
		{"go.mod", "module a\n\ngo 1.22\n", false},
		{"go.mod", "module a\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n", true},
		{"api/go.mod", "module a\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n", false},
		{"go.mod", "module a\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => example.com/fork v1.0.0\n", true},
		{"package.json", `{"name":"a","scripts":{"test":"node --test"}}`, false},
		{"package.json", `{"name":"a","devDependencies":{"mocha":"^10.0.0"}}`, true},
		{"requirements.txt", "# none yet\n\n", false},
		{"requirements-dev.txt", "pytest>=7\n", true},
		{"pyproject.toml", "[project]\nname = \"a\"\n\n[build-system]\nrequires = [\"setuptools\"]\n", false},
		{"pyproject.toml", "[project]\nname = \"a\"\ndependencies = [\"requests>=2\"]\n", true},
		{"Cargo.toml", "[package]\nname = \"a\"\n\n[dependencies]\n", false},
		{"Cargo.toml", "[package]\nname = \"a\"\n\n[dependencies]\nserde = \"1\"\n", true},
		{"Gemfile", "source \"https://rubygems.org\"\n", false},
		{"Gemfile", "source \"https://rubygems.org\"\n\ngem \"rspec\", \"~> 3.12\"\n", true},
		{"composer.json", `{"require":{"php":">=8.1","ext-json":"*"}}`, false},
		{"composer.json", `{"require-dev":{"phpunit/phpunit":"^10"}}`, true},
		{"package-lock.json", `{"packages":{"node_modules/a":{"version":"1.0.0"}}}`, false},
		{"README.md", "require x", false},
	} {
		if got := DeclaresDependencies(tc.path, []byte(tc.src)); got != tc.want {
			t.Errorf("DeclaresDependencies(%s, %q) = %v, want %v", tc.path, tc.src, got, tc.want)
		}
	}
}
