package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/sandbox"
)

// locator names where line (1-based) of a tool's result text is, for a
// finding: "pkg/a.go line 12" is more use to the model and to a reviewer
// than "line 40 of the result".
type locator func(text string, line int) string

// guarded wraps a tool's function so that what it returns is scanned for
// secrets before the model or the ledger sees it (docs/design.md §5). It is the
// one place every result passes; a tool that scanned its own result (to
// attribute findings better, or to act on them) marks it scanned.
func guarded[P any](s *Set, tool string, locate locator, f func(context.Context, P) (Result, error)) func(context.Context, P) (Result, error) {
	return func(ctx context.Context, p P) (Result, error) {
		res, err := f(ctx, p)
		if err != nil || res.scanned {
			return res, err
		}
		return s.guard(ctx, tool, res, locate)
	}
}

// guard withholds res when its text or a command's recorded output holds
// what the secret rules match. docs/design.md's rule is to block, not to redact
// and carry on: the result becomes secret_detected, naming each rule and
// where it matched, and each offending command output in the record is
// replaced by a note. Files the call changed stay reported as changed.
func (s *Set) guard(ctx context.Context, tool string, res Result, locate locator) (Result, error) {
	var found []SecretFinding
	rest := res.Text
	for i := range res.Commands {
		c := &res.Commands[i]
		hits, err := s.scan(ctx, c.Output)
		if err != nil {
			return Result{}, err
		}
		if len(hits) == 0 {
			// The text usually repeats the output; it was just scanned.
			if c.Output != "" {
				rest = strings.Replace(rest, c.Output, "", 1)
			}
			continue
		}
		found = append(found, withholdOutput(c, hits)...)
	}
	if len(found) == 0 {
		hits, err := s.scan(ctx, rest)
		if err != nil {
			return Result{}, err
		}
		for _, h := range hits {
			found = append(found, SecretFinding{Rule: h.rule, Where: locate(rest, h.line)})
		}
	}
	if len(found) == 0 {
		return res, nil
	}
	return s.withheld(tool, res, found), nil
}

// withholdOutput replaces c's output by a note naming each hit's rule and
// line, and returns the findings.
func withholdOutput(c *CommandRecord, hits []hit) []SecretFinding {
	where := "output of command `" + shortCommand(c.Command) + "`"
	var found []SecretFinding
	var notes []secrets.Finding
	for _, h := range hits {
		found = append(found, SecretFinding{Rule: h.rule, Where: where + ", line " + strconv.Itoa(h.line)})
		notes = append(notes, secrets.Finding{RuleID: h.rule, Line: h.line})
	}
	c.Output = secrets.Note(notes...) + "\n"
	return found
}

// WithholdSecrets is WithholdSecretsIn without a work tree: gitleaks'
// rules only, no secret-file values.
//
// Deprecated: setup commands run in a work tree; use WithholdSecretsIn.
func WithholdSecrets(ctx context.Context, sc *secrets.Scanner, rec CommandRecord) (CommandRecord, []SecretFinding, error) {
	return WithholdSecretsIn(ctx, sc, nil, rec)
}

// WithholdSecretsIn is the tools' scan for a command record that reaches
// the ledger or a report without passing through a tool (setup
// commands), with the same two checks as a tool's output: gitleaks'
// rules, with decoding, and the values of the secret-bearing files of the
// work tree ws (nil for none). When rec's output holds either, the
// output is replaced by a note naming the rules and lines and the
// findings say where; otherwise rec comes back unchanged. The error is
// the context's, when it ended the scan, or the work tree's.
func WithholdSecretsIn(ctx context.Context, sc *secrets.Scanner, ws *sandbox.Workspace, rec CommandRecord) (CommandRecord, []SecretFinding, error) {
	s := &Set{secrets: sc, links: &secretFiles{}}
	if ws != nil {
		s.links = newSecretFiles(ws)
	}
	hits, err := s.scan(ctx, rec.Output)
	if err != nil {
		return rec, nil, err
	}
	if len(hits) == 0 {
		return rec, nil, nil
	}
	found := withholdOutput(&rec, hits)
	return rec, found, nil
}

// Redact withholds in text, a model's turn or tool arguments that reach
// the ledger without passing through a tool, what a tool's output would
// be withheld for: each match of gitleaks' rules (with decoding) is
// replaced in place by secrets.Note, and each line holding a value of one
// of the work tree's secret files by a note of its own. The findings name
// rules and lines, never values.
func (s *Set) Redact(ctx context.Context, name, text string) (string, []secrets.Finding, error) {
	out, found, err := s.secrets.Redact(ctx, name, text)
	if err != nil {
		return "", nil, err
	}
	// find names one line per value: look again until none is left.
	for range strings.Count(out, "\n") + 1 {
		lines, err := s.links.find(ctx, out)
		if err != nil {
			return "", nil, err
		}
		if len(lines) == 0 {
			break
		}
		all := strings.Split(out, "\n")
		for _, l := range lines {
			f := secrets.Finding{File: name, Line: l, RuleID: RuleSecretFile, Description: "a value of a secret file of the work tree"}
			all[l-1] = secrets.Note(f)
			found = append(found, f)
		}
		out = strings.Join(all, "\n")
	}
	return out, found, nil
}

// RuleSecretFile names a finding that is a value from one of the work
// tree's secret-bearing files (.env, a key) rather than a gitleaks match.
const RuleSecretFile = "secret-file-content"

// hit is one finding in a text: a rule and a 1-based line.
type hit struct {
	rule string
	line int
}

// scan applies gitleaks' rules and the values of the tree's secret files
// to text. A scan cut short by ctx is an error, never a clean result.
func (s *Set) scan(ctx context.Context, text string) ([]hit, error) {
	if text == "" {
		return nil, nil
	}
	var hits []hit
	for _, f := range s.secrets.ScanContext(ctx, "", text) {
		hits = append(hits, hit{f.RuleID, f.Line})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lines, err := s.links.find(ctx, text)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		if !slices.ContainsFunc(hits, func(h hit) bool { return h.line == l }) {
			hits = append(hits, hit{RuleSecretFile, l})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.line - b.line })
	return hits, nil
}

// withheld builds the secret_detected result that replaces res.
func (s *Set) withheld(tool string, res Result, found []SecretFinding) Result {
	what := fmt.Sprintf("the %s result was withheld: %s", tool, secrets.HoldsSecret(asFindings(found)...))
	out := fail(SecretDetected, what, secretHint(tool))
	if len(s.secrets.Scan("", out.Text)) > 0 {
		// A location (a file name, the model's own command) matched a
		// rule itself: say less.
		out = fail(SecretDetected, fmt.Sprintf("the %s result was withheld: %s", tool, secrets.HoldsSecret()), secretHint(tool))
		for i := range found {
			found[i].Where = "(location withheld)"
		}
	}
	if len(res.Changed) > 0 {
		// A path can be what matched (a file named after a key).
		shown := make([]string, len(res.Changed))
		for i, p := range res.Changed {
			shown[i], _, _ = s.secrets.ScanPath(context.Background(), p)
		}
		out.Text += "\nthe call's changes were made: " + strings.Join(shown, ", ")
	}
	out.Commands, out.Changed, out.Finish, out.Secrets = res.Commands, res.Changed, res.Finish, found
	out.scanned = true
	return out
}

// asFindings are the tool's findings as secrets names them: the rule,
// and the location for people as the place.
func asFindings(found []SecretFinding) []secrets.Finding {
	out := make([]secrets.Finding, len(found))
	for i, f := range found {
		out[i] = secrets.Finding{RuleID: f.Rule, File: f.Where}
	}
	return out
}

func secretHint(tool string) string {
	switch tool {
	case "run":
		return "do not print credentials; if you need to know something about them, check it without printing them (for example test -s FILE, wc -l or grep -c)"
	case "search":
		return "narrow the search with path, glob or a more specific pattern so that it leaves out the file named above"
	case "read_file":
		return "this file holds a credential and cannot be shown; work without its content, and say in your finish summary if the change needs it"
	case "verify":
		return "a check printed a credential; it cannot be shown, but its pass or fail is in the run's record; use run on a narrower command that does not print it"
	}
	return "the output cannot be shown; continue without it"
}

// shortCommand keeps a command to one line of at most 80 bytes for a
// location.
func shortCommand(cmd string) string {
	cmd = oneLine(cmd)
	if len(cmd) > 80 {
		cut := 80
		for cut > 0 && cmd[cut]&0xC0 == 0x80 {
			cut--
		}
		cmd = cmd[:cut] + "…"
	}
	return cmd
}

// resultLine is line n (1-based) of text, or "".
func resultLine(text string, n int) string {
	for i := 1; text != ""; i++ {
		line, rest, _ := strings.Cut(text, "\n")
		if i == n {
			return line
		}
		text = rest
	}
	return ""
}

// locateIn is the default locator: the line of the tool's result.
func locateIn(tool string) locator {
	return func(_ string, line int) string {
		return fmt.Sprintf("line %d of the %s result", line, tool)
	}
}

var searchLine = regexp.MustCompile(`^(.+?):(\d+): `)

// locateSearch reads "path:line: text" back into "path line N".
func locateSearch(text string, line int) string {
	if m := searchLine.FindStringSubmatch(resultLine(text, line)); m != nil {
		return m[1] + " line " + m[2]
	}
	return locateIn("search")(text, line)
}

// locateRead maps a line of read_file's rendering (a header, then one
// line of the file per line from start) back to the file's line.
func locateRead(rel string, start int) locator {
	return func(_ string, line int) string {
		if line < 2 {
			return rel + " (the result's header)"
		}
		return fmt.Sprintf("%s line %d", rel, start+line-2)
	}
}

// defaultSecrets loads gitleaks' rules once per process.
