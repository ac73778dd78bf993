package secrets

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Note is the one text that stands in for withheld text, wherever it is
// withheld: a tool result, a command's or a check's output, the model's
// turns and tool arguments, its summary, a path. It names each finding's
// rule and place (Describe), never a value.
func Note(found ...Finding) string {
	if list := Describe(found...); list != "" {
		return Withheld("secret_detected: " + list)
	}
	return Withheld("secret_detected")
}

// Withheld is the bracket that stands where text was withheld, saying
// why: Note's for findings, and the same words for what is withheld
// for another reason (a value of a secret file, a file the model may
// not see), so every withholding reads alike to the model and to people.
func Withheld(why string) string { return "[withheld: " + why + "]" }

// HoldsSecret is the reason a whole text is withheld for its findings:
// "it holds what looks like a secret (" + Describe(found) + ")".
func HoldsSecret(found ...Finding) string {
	if list := Describe(found...); list != "" {
		return "it holds what looks like a secret (" + list + ")"
	}
	return "it holds what looks like a secret"
}

// Describe names findings by rule and place, never by value: the first
// three as "RULE at FILE line N", then "and N more"; "" for none. A
// place that matches a rule itself (a file named after a key) is left
// out.
func Describe(found ...Finding) string {
	const show = 3
	var parts []string
	for _, f := range found {
		p := f.RuleID + place(f)
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	if len(parts) > show {
		parts = append(parts[:show], fmt.Sprintf("and %d more", len(parts)-show))
	}
	return strings.Join(parts, ", ")
}

// place is " at FILE line N", " at FILE" or " at line N", without the
// file when its name matches a rule.
func place(f Finding) string {
	file := f.File
	if file != "" && nameMatches(file) {
		file = ""
	}
	switch {
	case file != "" && f.Line > 0:
		return fmt.Sprintf(" at %s line %d", file, f.Line)
	case file != "":
		return " at " + file
	case f.Line > 0:
		return fmt.Sprintf(" at line %d", f.Line)
	}
	return ""
}

// nameMatches reports whether a name matches a rule. A scanner that
// cannot load says yes: the name is then left out.
func nameMatches(name string) bool {
	s, err := Default()
	return err != nil || len(s.direct(context.Background(), "", name)) > 0 ||
		len(s.decoded(context.Background(), "", name)) > 0
}
