package codeowners

import (
	"slices"
	"testing"
)

// The example file of GitHub's "About code owners", one owner per rule so
// that each path names the rule that won.
const example = `# Lines starting with '#' are comments.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat-docs
/scripts/ @doctocat @octocat
**/logs @octocat-logs
/apps/ @octocat-apps
/apps/github
/src/**/tests @tester
content/** @content
!*.md @never
[abc].py @never
\#hash @hashed
`

func TestOwners(t *testing.T) {
	rules := Parse(example)
	for path, want := range map[string][]string{
		"README":                            {"@global-owner1", "@global-owner2"},
		"a/b/c.md":                          {"@global-owner1", "@global-owner2"}, // negation unsupported
		"x.js":                              {"@js-owner"},
		"deep/in/x.js":                      {"@js-owner"},
		"x.go":                              {"docs@example.com"},
		"notes.txt":                         {"@octo-org/octocats"},
		"build/logs/x.log":                  {"@octocat-logs"}, // **/logs comes later
		"build/logs":                        {"@octocat-logs"},
		"docs/getting-started.md":           {"@doctocat-docs"},
		"docs/build-app/troubleshooting.md": {"@doctocat-docs"},
		"x/docs/y.md":                       {"@global-owner1", "@global-owner2"}, // docs/* is anchored
		"scripts/deploy.sh":                 {"@doctocat", "@octocat"},
		"deeply/nested/logs/x":              {"@octocat-logs"},
		"apps/web/x.go":                     {"@octocat-apps"},
		"lib/apps/x.py":                     {"@octocat"},
		"apps/github/x":                     nil, // an empty rule, last: no owners
		"src/tests/a.go":                    {"@tester"},
		"src/a/b/tests/c.go":                {"@tester"},
		"content/a/b.html":                  {"@content"},
		"#hash":                             {"@hashed"},
		"a.py":                              {"@global-owner1", "@global-owner2"},
		"/x.js":                             {"@js-owner"},
		"scriptsX/y":                        {"@global-owner1", "@global-owner2"},
	} {
		if got := rules.Owners(path); !slices.Equal(got, want) {
			t.Errorf("Owners(%q) = %q, want %q", path, got, want)
		}
	}
}

// docs/* names the files right in docs/, not deeper ones.
func TestFolderStar(t *testing.T) {
	rules := Parse("docs/* @flat\n")
	if got := rules.Owners("docs/a.md"); !slices.Equal(got, []string{"@flat"}) {
		t.Errorf("docs/a.md: %q", got)
	}
	if got := rules.Owners("docs/sub/a.md"); got != nil {
		t.Errorf("docs/sub/a.md: %q, want none", got)
	}
}

func TestReviewers(t *testing.T) {
	rules := Parse("* @Alice\n*.go @bob @acme/Go-Team alice@example.com @alice\n")
	users, teams := rules.Reviewers([]string{"a.go", "README", "b.go"})
	if !slices.Equal(users, []string{"bob", "alice"}) || !slices.Equal(teams, []string{"Go-Team"}) {
		t.Errorf("Reviewers = %q, %q", users, teams)
	}
	if users, teams := Parse("").Reviewers([]string{"a"}); users != nil || teams != nil {
		t.Errorf("no file: %q, %q", users, teams)
	}
}
