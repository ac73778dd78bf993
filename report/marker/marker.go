// Package marker renders and parses every hidden line Patchwright keeps in
// what it writes on GitHub: a pull request's body (run, history, pushed
// commit), an issue's status and plan comments, and replies. It is the
// one owner of their format, so the writer and every reader agree, and
// it imports nothing of ours, so the webhook, the worker and report can
// all read it without compiling each other.
//
// Each marker is a whole HTML comment, "<!-- patchwright:KIND… -->", found
// wherever it stands: no reader depends on where a marker sits relative
// to the others. A rewrite of a body keeps every marker it does not own
// (Keep).
package marker

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kind names what a marker carries.
type Kind string

// The kinds of marker. A pull request's body carries Run, History and
// Pushed; an issue's status comment Status; a plan comment Plan; a reply
// Reply.
const (
	KindRun     Kind = "run"
	KindHistory Kind = "history"
	KindPushed  Kind = "pushed"
	KindStatus  Kind = "status"
	KindPlan    Kind = "plan"
	KindReply   Kind = "reply"
	KindStale   Kind = "stale"
	KindMerged  Kind = "merged"
)

// MergedStart and MergedEnd bound the block at the top of a pull
// request's Verification section that shows the checks on a merge of its
// moved base (report.ReplaceMergeChecked): a later merge replaces it.
const (
	MergedStart = "<!-- patchwright:merged start -->"
	MergedEnd   = "<!-- patchwright:merged end -->"
)

// anyRE finds every marker: its kind and the whole comment. A marker is
// one line; a value never holds "-->" (Value keeps it out).
var anyRE = regexp.MustCompile(`<!-- patchwright:([a-z]+)[ =][^\n]*? -->`)

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// Value keeps a value fit for a marker: it cannot end the comment or
// smuggle in another marker. "" becomes "unknown".
func Value(s string) string {
	s = unsafeRE.ReplaceAllString(s, "_")
	if s == "" {
		return "unknown"
	}
	return s
}

// Pushed names the commit Patchwright last pushed to a pull request's
// branch: a CI failure on that head is Patchwright's to fix, the branch is
// deleted on close while its head is still that commit, and commits after
// it are someone else's.
func Pushed(sha string) string { return "<!-- patchwright:pushed " + sha + " -->" }

var pushedRE = regexp.MustCompile(`<!-- patchwright:pushed ([0-9a-f]{40}) -->`)

// ParsePushed finds the last Pushed marker in body; "" when there is none.
func ParsePushed(body string) string {
	m := pushedRE.FindAllStringSubmatch(body, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// Run names the run and the attempt that wrote a pull request's body.
func Run(runID string, attempt int) string {
	return fmt.Sprintf("<!-- patchwright:run=%s attempt=%d -->", Value(runID), attempt)
}

var runRE = regexp.MustCompile(`<!-- patchwright:run=([A-Za-z0-9_.-]+) attempt=([0-9]+) -->`)

// ParseRun finds the Run marker in body; ok is false when there is none.
func ParseRun(body string) (runID string, attempt int, ok bool) {
	m := runRE.FindStringSubmatch(body)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return "", 0, false
	}
	return m[1], n, true
}

// History carries a pull request's attempt history (report.History as
// JSON), base64 so no byte of it can end the comment.
func History(payload []byte) string {
	return "<!-- patchwright:history " + base64.StdEncoding.EncodeToString(payload) + " -->"
}

var historyRE = regexp.MustCompile(`<!-- patchwright:history ([A-Za-z0-9+/=]+) -->`)

// ParseHistory finds the History marker's payload in body; ok is false
// when there is none or it does not decode.
func ParseHistory(body string) (payload []byte, ok bool) {
	m := historyRE.FindStringSubmatch(body)
	if m == nil {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(m[1])
	return b, err == nil
}

// HistorySpan is where the History marker stands in body: [start, end);
// ok is false when there is none.
func HistorySpan(body string) (start, end int, ok bool) {
	loc := historyRE.FindStringIndex(body)
	if loc == nil {
		return 0, 0, false
	}
	return loc[0], loc[1], true
}

// Status finds an issue's one status comment.
func Status(issue int) string {
	return fmt.Sprintf("<!-- patchwright:status issue=%d -->", issue)
}

// Plan marks a plan comment: the task that made it (a re-run of the task
// edits its comment instead of posting a second) and the issue.
func Plan(issue int, task string) string {
	return fmt.Sprintf("<!-- patchwright:plan issue=%d task=%s -->", issue, Value(task))
}

// Reply marks the reply to a delivery, so a retried post finds the one an
// earlier try stored.
func Reply(deliveryID string) string {
	return "<!-- patchwright:reply " + Value(deliveryID) + " -->"
}

// Stale marks the warning that an untouched pull request will be closed.
func Stale(pr int) string { return fmt.Sprintf("<!-- patchwright:stale pr=%d -->", pr) }

// Found is one marker in a body.
type Found struct {
	Kind Kind
	Text string
}

// All lists the markers in body, in order.
func All(body string) []Found {
	var out []Found
	for _, m := range anyRE.FindAllStringSubmatch(body, -1) {
		out = append(out, Found{Kind: Kind(m[1]), Text: m[0]})
	}
	return out
}

// Keep returns after with the markers of before that a rewrite dropped:
// for each kind not in owned that before carries and after lacks
// entirely, before's markers of that kind are appended, in order. A kind
// the rewrite owns is its to write or to drop.
func Keep(before, after string, owned ...Kind) string {
	have := map[Kind]bool{}
	for _, f := range All(after) {
		have[f.Kind] = true
	}
	var lost []string
	for _, f := range All(before) {
		if !have[f.Kind] && !slices.Contains(owned, f.Kind) {
			lost = append(lost, f.Text)
		}
	}
	if len(lost) == 0 {
		return after
	}
	return strings.TrimRight(after, "\n") + "\n\n" + strings.Join(lost, "\n") + "\n"
}
