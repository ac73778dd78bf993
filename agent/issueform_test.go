package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bugForm is an issue form as GitHub documents them: a markdown block, an
// input, a textarea, a dropdown and checkboxes.
const bugForm = `name: Bug report
description: File a bug report.
labels: ["bug"]
body:
  - type: markdown
    attributes:
      value: Thanks for taking the time to fill out this bug report!
  - type: textarea
    id: what-happened
    attributes:
      label: What happened?
      description: Also tell us, what did you expect to happen?
    validations:
      required: true
  - type: input
    id: version
    attributes:
      label: Version
  - type: dropdown
    id: browsers
    attributes:
      label: What browsers are you seeing the problem on?
      multiple: true
      options: [Firefox, Chrome]
  - type: checkboxes
    id: terms
    attributes:
      label: Code of Conduct
      options:
        - label: I agree to follow this project's Code of Conduct
          required: true
`

// formBody is the body GitHub writes for that form, with the version left
// empty.
const formBody = "### What happened?\n\nThe save button does nothing.\n\n```\nTypeError: x is undefined\n```\n\n### Version\n\n_No response_\n\n" +
	"### What browsers are you seeing the problem on?\n\nFirefox, Chrome\n\n### Code of Conduct\n\n- [X] I agree to follow this project's Code of Conduct"

func formWorkspace(t *testing.T) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, formDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, formDir, "bug.yml"), []byte(bugForm), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, formDir, "config.yml"), []byte("blank_issues_enabled: false\n"), 0o644)
	return dir
}

// The task shows each field of a form's issue with its label, without the
// empty ones; the first message the model gets carries it.
func TestIssueFormRendered(t *testing.T) {
	ws := mustWorkspace(t, formWorkspace(t))
	r := &runner{cfg: Config{Issue: Issue{Number: 3, Title: "Save broken", Body: formBody}, Workspace: ws}, lim: Limits{}.withDefaults()}
	r.lim.RepoMapTokens = 0
	first, err := r.buildFirst(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"filed with the repository's issue form",
		"<field label=\"What happened?\">\nThe save button does nothing.\n\n```\nTypeError: x is undefined\n```\n</field>",
		"<field label=\"What browsers are you seeing the problem on?\">\nFirefox, Chrome\n</field>",
		"<field label=\"Code of Conduct\">\n- [X] I agree",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first message lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "Version") || strings.Contains(first, noResponse) || strings.Contains(first, "### ") {
		t.Errorf("first message keeps the empty field or the raw headings:\n%s", first)
	}
}

// A body is shown as written unless it is all sections of the repository's
// form fields: no forms, text before the first heading, or headings that
// are not the forms' labels.
func TestIssueFormOnlyForForms(t *testing.T) {
	labels := formLabels(mustWorkspace(t, formWorkspace(t)))
	if len(labels) != 4 || !labels["Version"] {
		t.Fatalf("labels = %v, want the form's four", labels)
	}
	for _, c := range []struct {
		name, body string
		labels     map[string]bool
	}{
		{"no forms", formBody, formLabels(mustWorkspace(t, t.TempDir()))},
		{"text first", "Hello.\n\n" + formBody, labels},
		{"other headings", "### Steps\n\n1. run it\n\n### Expected\n\nit works", labels},
	} {
		if got, ok := renderForm(c.body, c.labels); ok || got != c.body {
			t.Errorf("%s: rendered %q", c.name, got)
		}
	}
}
