package agent

import (
	"io/fs"
	"path"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/sandbox"
)

// Issue forms. An issue filed through one of the repository's forms
// (.github/ISSUE_TEMPLATE/*.yml) has a body GitHub writes as one
// "### <field label>" section per field, with "_No response_" for a field
// left empty. The task gives the model each field with its label and
// drops the empty ones. Only headings that are labels of the repository's
// own forms count, so an ordinary issue with "###" headings is shown as
// written.

// formDir holds the repository's issue forms.
const formDir = ".github/ISSUE_TEMPLATE"

// Bounds on what is read of the forms: they only name labels.
const (
	maxFormFiles = 50
	maxFormBytes = 64 << 10
)

// noResponse is what GitHub writes for a form field left empty.
const noResponse = "_No response_"

// formLabels returns the field labels of the repository's issue forms;
// none when it has no forms or they cannot be read. A form the model may
// not see (a link, a secret path) is skipped, as an instruction file is.
func formLabels(ws *sandbox.Workspace) map[string]bool {
	labels := map[string]bool{}
	files := 0
	// A missing directory or an unreadable form leaves fewer labels, and
	// the body is then shown as written: the walk's error changes nothing.
	_ = ws.WalkVisible(formDir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // not visible or unreadable: skipped
		case d.IsDir() && p != formDir:
			return fs.SkipDir
		case d.IsDir():
			return nil
		case files >= maxFormFiles:
			return fs.SkipAll
		}
		if ext := path.Ext(p); ext != ".yml" && ext != ".yaml" {
			return nil
		}
		files++
		if info, err := d.Info(); err != nil || info.Size() > maxFormBytes {
			return nil
		}
		if data, err := ws.ReadFile(p); err == nil {
			addFormLabels(labels, data)
		}
		return nil
	})
	return labels
}

// addFormLabels adds the labels of one form's input fields; a file that is
// not a form adds none.
func addFormLabels(labels map[string]bool, data []byte) {
	var form struct {
		Body []struct {
			Type       string `yaml:"type"`
			Attributes struct {
				Label string `yaml:"label"`
			} `yaml:"attributes"`
		} `yaml:"body"`
	}
	if yaml.Unmarshal(data, &form) != nil {
		return
	}
	for _, f := range form.Body {
		if l := strings.TrimSpace(f.Attributes.Label); l != "" && f.Type != "markdown" {
			labels[l] = true
		}
	}
}

// renderForm renders a form's body as its fields, each with its label,
// empty ones dropped. ok is false, and body is to be shown as written,
// unless the body is all "### label" sections whose labels are the
// repository's form fields.
func renderForm(body string, labels map[string]bool) (string, bool) {
	if len(labels) == 0 {
		return body, false
	}
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	type field struct{ label, value string }
	var fields []field
	for _, line := range lines {
		if label, ok := strings.CutPrefix(line, "### "); ok && labels[strings.TrimSpace(label)] {
			fields = append(fields, field{label: strings.TrimSpace(label)})
			continue
		}
		if len(fields) == 0 {
			if strings.TrimSpace(line) != "" {
				return body, false // text before the first field: not a form's body
			}
			continue
		}
		f := &fields[len(fields)-1]
		f.value += line + "\n"
	}
	if len(fields) == 0 {
		return body, false
	}
	var b strings.Builder
	b.WriteString("This issue was filed with the repository's issue form; its fields follow, each with its label (fields left empty are left out).\n")
	for _, f := range fields {
		v := strings.TrimSpace(f.value)
		if v == "" || v == noResponse {
			continue
		}
		b.WriteString("\n<field label=" + strconv.Quote(f.label) + ">\n" + v + "\n</field>\n")
	}
	return b.String(), true
}
