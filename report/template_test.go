package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/verify"
)

// A template written for this test in the shape common public ones take:
// description, type of change and a checklist, some boxes pre-checked.
const sampleTemplate = `<!-- Thanks for contributing! -->
## Description

Please include a summary of the change and which issue is fixed.

Fixes # (issue)

## Type of change

- [ ] Bug fix (non-breaking change which fixes an issue)
- [x] New feature

## How Has This Been Tested?

Describe the tests that you ran.

` + "```" + `
## not a heading: inside a fence
` + "```" + `

## Screenshots

## Checklist

- [x] My code follows the style guidelines of this project
- [ ] I have added tests that prove my fix is effective or that my feature works
- [ ] New and existing unit tests pass locally with my changes
- [ ] The linter passes
- [ ] I have made corresponding changes to the documentation
`

func TestTemplateHeadingsAndChecklist(t *testing.T) {
	in := base()
	in.Template = Template{Path: ".github/pull_request_template.md", Text: sampleTemplate}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"## Description", "## Type of change", "## How Has This Been Tested?", "## Screenshots", "## Checklist", "## Changes", "## Not verified", "## Run"}
	if got := headings(body); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("headings %q, want %q:\n%s", got, want, body)
	}
	section := func(h string) string {
		i := strings.Index(body, h+"\n")
		rest := body[i+len(h)+1:]
		if j := strings.Index(rest, "\n## "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	if s := section("## Description"); !strings.Contains(s, "Written by the model") || !strings.Contains(s, "Closes #") {
		t.Errorf("Description is not our summary:\n%s", s)
	}
	if s := section("## How Has This Been Tested?"); !strings.Contains(s, "**Outcome: verified**") || !strings.Contains(s, "| check | command |") {
		t.Errorf("testing section is not our verification:\n%s", s)
	}
	if s := section("## Screenshots"); !strings.Contains(s, "Left for the reviewer") {
		t.Errorf("an unmatched section is not left for the reviewer:\n%s", s)
	}
	for _, line := range []string{
		"- [ ] Bug fix (non-breaking change which fixes an issue)",
		"- [ ] New feature", // checked in the template; nothing recorded backs it
		"- [ ] My code follows the style guidelines of this project",
		"- [x] I have added tests that prove my fix is effective or that my feature works",
		"- [x] New and existing unit tests pass locally with my changes",
		"- [x] The linter passes", // go vet, a linter, passed
		"- [ ] I have made corresponding changes to the documentation",
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("body lacks %q:\n%s", line, body)
		}
	}
	if !strings.Contains(body, "follows the repository's pull-request template (`.github/pull_request_template.md`)") {
		t.Error("the body does not name the template")
	}
	if !strings.HasSuffix(strings.TrimSpace(body), "-->") || !strings.Contains(body, "<!-- patchwright:run=") {
		t.Error("markers lost")
	}

	// A failing final test check backs no testing box, a failing vet no
	// linter box.
	in.Final[1].Passed, in.Final[1].ExitCode = false, 1
	in.Final[2].Passed, in.Final[2].ExitCode = false, 1
	in.Outcome = verify.Failed
	body, err = PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(body, "[x]") {
		t.Errorf("a box is checked although the tests failed:\n%s", body)
	}
}

// Without a heading, or past the size bound, a template is not followed.
func TestTemplateNotUsable(t *testing.T) {
	for name, text := range map[string]string{
		"empty":      "",
		"no heading": "Describe your change.\n- [ ] tests pass\n",
		"too large":  "## Description\n" + strings.Repeat("x", MaxTemplateBytes),
	} {
		in := base()
		in.Template = Template{Path: "pull_request_template.md", Text: text}
		body, err := PRBody(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := headings(body); strings.Join(got, "|") != strings.Join(contractHeadings, "|") {
			t.Errorf("%s: headings %q, want ours", name, got)
		}
	}
}
