package pipeline

import (
	"context"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
)

// withheld is what stands in for a command's or a check's output that
// holds what looks like a secret: secrets.Note, naming the rules and
// lines; "" when text holds none. A whole output goes, as a tool's does
// (docs/design.md §5): what printed one secret likely printed others no rule
// knows.
func withheld(sc *secrets.Scanner, name, text string) string {
	f := sc.Scan("", text)
	if len(f) == 0 {
		return ""
	}
	return secrets.Note(f...)
}

// withholdText is text with each match withheld in place (secrets.Redact),
// for sentences: the model's summary, a reason, a note of the report.
func withholdText(sc *secrets.Scanner, text string) (string, error) {
	out, _, err := sc.Redact(context.Background(), "", text)
	return out, err
}

// shownPath is a changed path as it may be printed: a file or directory
// name that matches a rule (a file named after a key) has the match
// withheld. The commit never writes such a path: the scan blocks it.
func (r *run) shownPath(p string) string {
	shown, _, err := r.scanner.ScanPath(context.Background(), p)
	if err != nil {
		return secrets.Note()
	}
	return shown
}

// shownPaths are the changed paths as they may be printed.
func (r *run) shownPaths() []string {
	out := make([]string, len(r.fin.changes))
	for i, c := range r.fin.changes {
		out[i] = r.shownPath(c.Path)
	}
	return out
}

// withholdSecrets scans every text of the report that a command or the
// model wrote (the summary, the reason, each check's output, the notes)
// before anything is posted. A check's output that holds what looks like
// a secret is replaced by a note naming the rule; in a sentence each
// match is: a test that prints .env must not publish it. The agent
// withheld the model's words already; this is the last look, on what the
// body will say.
func withholdSecrets(sc *secrets.Scanner, in *report.Input) error {
	var err error
	for _, s := range []*string{&in.Summary, &in.Reason, &in.StopDetail} {
		if *s, err = withholdText(sc, *s); err != nil {
			return err
		}
	}
	for i := range in.Missing {
		if in.Missing[i], err = withholdText(sc, in.Missing[i]); err != nil {
			return err
		}
	}
	for i := range in.Refused {
		// The host name is what a setup process asked for: anything.
		for _, s := range []*string{&in.Refused[i].Host, &in.Refused[i].Command} {
			if *s, err = withholdText(sc, *s); err != nil {
				return err
			}
		}
	}
	for i := range in.Files {
		shown, _, err := sc.ScanPath(context.Background(), in.Files[i].Path)
		if err != nil {
			return err
		}
		in.Files[i].Path = shown
	}
	for _, list := range [][]verify.CheckResult{in.Baseline, in.Final} {
		for i := range list {
			if w := withheld(sc, list[i].Name, list[i].Output); w != "" {
				list[i].Output = w
			}
		}
	}
	for i := range in.NewTests {
		if w := withheld(sc, in.NewTests[i].Name, in.NewTests[i].Output); w != "" {
			in.NewTests[i].Output = w
		}
	}
	return nil
}

// scanningRecorder writes check results to the ledger with the output of
// any check that printed a secret withheld, so the ledger (kept, and shown
// on run pages) never holds one either.
type scanningRecorder struct {
	w  *ledger.Writer
	sc *secrets.Scanner
}

// RecordCheck implements verify.Recorder.
func (s scanningRecorder) RecordCheck(ctx context.Context, c verify.CheckResult) error {
	if w := withheld(s.sc, c.Name, c.Output); w != "" {
		c.Output = w
	}
	return verify.LedgerRecorder{W: s.w}.RecordCheck(ctx, c)
}

// RecordNewTests records new tests' runs on the original code, withheld
// likewise.
func (s scanningRecorder) RecordNewTests(ctx context.Context, results []verify.NewTestResult) error {
	out := make([]verify.NewTestResult, len(results))
	for i, r := range results {
		if w := withheld(s.sc, r.Name, r.Output); w != "" {
			r.Output = w
		}
		out[i] = r
	}
	return verify.LedgerRecorder{W: s.w}.RecordNewTests(ctx, out)
}
