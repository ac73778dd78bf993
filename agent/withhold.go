package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/internal/logkey"
)

// Redactor withholds what looks like a secret in a text: each match is
// replaced by secrets.Note, and the findings name rules and lines, never
// values. *secrets.Scanner (gitleaks' rules with decoding) and
// *tools.Set (the same, and the values of the work tree's secret files)
// are Redactors.
type Redactor interface {
	Redact(ctx context.Context, name, text string) (string, []secrets.Finding, error)
}

// The model's own words are scanned as tool output is, before the ledger
// (kept, and shown on run pages), the log or the result sees them: a
// secret the model put together from pieces that no rule matched one by
// one, or copied from a result it saw before a rule existed for it, is
// still in what it writes. What it sends the model's service is not
// changed: the service already has it.

// withhold returns text with what looks like a secret withheld, and logs
// each finding with where it was (never the value). The scan runs to its
// end even when ctx is done, since the text is recorded either way and it
// is short; a scan that fails withholds the whole text.
func (r *runner) withhold(ctx context.Context, where, text string) string {
	if text == "" {
		return text
	}
	out, found, err := r.redactor.Redact(context.WithoutCancel(ctx), "", text)
	if err != nil {
		r.log.Warn("model text withheld: the secret scan failed", logkey.Step, r.steps, "in", where, logkey.Err, err)
		return secrets.Note(secrets.Finding{RuleID: "unscanned"})
	}
	for _, f := range found {
		r.log.Warn("model text withheld: it holds what looks like a secret", logkey.Step, r.steps, "in", where, "rule", f.RuleID, "line", f.Line)
	}
	return out
}

// withholdArgs is withhold for a tool call's arguments: the raw text, and
// each string of the JSON value it holds, decoded, since an escape (\u0041
// for A) hides a key from a scan of the raw text but not from whoever
// reads the arguments. When a decoded string held a match the arguments
// are written again from the withheld value: still JSON, keys sorted.
func (r *runner) withholdArgs(ctx context.Context, raw string) string {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if w, changed := r.withholdValue(ctx, v); changed {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if enc.Encode(w) == nil {
				raw = strings.TrimSuffix(b.String(), "\n")
			}
		}
	}
	return r.withhold(ctx, "tool call arguments", raw)
}

// withholdValue withholds in every string of a decoded JSON value, keys
// included, and says whether any changed.
func (r *runner) withholdValue(ctx context.Context, v any) (any, bool) {
	switch x := v.(type) {
	case string:
		w := r.withhold(ctx, "tool call arguments", x)
		return w, w != x
	case []any:
		changed := false
		for i := range x {
			var c bool
			x[i], c = r.withholdValue(ctx, x[i])
			changed = changed || c
		}
		return x, changed
	case map[string]any:
		out := make(map[string]any, len(x))
		changed := false
		for k, e := range x {
			w, c := r.withholdValue(ctx, e)
			k2 := r.withhold(ctx, "tool call arguments", k)
			out[k2] = w
			changed = changed || c || k2 != k
		}
		return out, changed
	}
	return v, false
}

// withholdPaths is the paths a call changed as they may be shown: a name
// that matches a rule (a file named after a key) has the match withheld.
func (r *runner) withholdPaths(ctx context.Context, paths []string) []string {
	if len(paths) == 0 {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		shown, found, err := r.paths.ScanPath(context.WithoutCancel(ctx), p)
		switch {
		case err != nil:
			shown = secrets.Note(secrets.Finding{RuleID: "unscanned"})
		case len(found) > 0:
			r.log.Warn("changed path withheld: it holds what looks like a secret", logkey.Step, r.steps, "rule", found[0].RuleID)
		}
		out[i] = shown
	}
	return out
}

// withheldError is a provider's error whose text went through withhold:
// an endpoint may quote the key it refused (an installation's own
// endpoint can quote it whole), and the text reaches the ledger, the
// log, the run's reason and the issue. Unwrap leads to a copy of the
// *provider.Error withheld the same way, so the error is classified as
// before and whoever unwraps it to word a comment shows no secret
// either.
type withheldError struct {
	msg string
	err error
}

func (e *withheldError) Error() string { return e.msg }
func (e *withheldError) Unwrap() error { return e.err }

// withholdError is err with its text withheld; err itself when nothing
// in it was.
func (r *runner) withholdError(ctx context.Context, err error) error {
	msg := err.Error()
	out := r.withhold(ctx, "provider error", msg)
	if out == msg {
		return err
	}
	var inner error = errors.New(out)
	if perr := (*provider.Error)(nil); errors.As(err, &perr) {
		cp := *perr
		cp.Code = r.withhold(ctx, "provider error code", perr.Code)
		cp.Reason = r.withhold(ctx, "provider error", perr.Reason)
		if perr.Err != nil {
			if t := perr.Err.Error(); r.withhold(ctx, "provider error", t) != t {
				cp.Err = errors.New(r.withhold(ctx, "provider error", t))
			}
		}
		inner = &cp
	}
	return &withheldError{msg: out, err: inner}
}
