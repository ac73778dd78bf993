package report

import (
	"encoding/json"
	"strings"

	"github.com/patchwright/patchwright/report/marker"
)

// History is the attempt history a pull-request body carries, hidden, so
// that any worker can read it on a retry (each worker's data directory is
// its own). PRBody writes it from Input.Attempts and the failed final
// checks; ParseHistory reads it back.
type History struct {
	Attempts []Attempt `json:"attempts"`
	// Failed are the final checks that failed in the latest attempt.
	Failed []FailedCheck `json:"failed,omitempty"`
}

// FailedCheck is a final check that failed, as the next attempt is told.
type FailedCheck struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Output  string `json:"output"`
}

// History bounds, so the history never crowds the body out of MaxBody.
const (
	maxHistoryAttempts = 20
	maxFailedChecks    = 5
	maxFailedOutput    = 1500
)

// historyHeading starts the visible part of the history section.
const historyHeading = "<details><summary>Attempt history</summary>"

// ParseHistory finds the history in a body; a body without one (edited by
// a person, or from before) gives an empty history.
func ParseHistory(body string) History {
	var h History
	b, ok := marker.ParseHistory(body)
	if !ok || json.Unmarshal(b, &h) != nil {
		return History{}
	}
	return h
}

// historyOf is the history of in: its attempts (the latest
// maxHistoryAttempts) and its failed final checks.
func historyOf(in Input) History {
	h := History{Attempts: in.Attempts}
	if len(h.Attempts) > maxHistoryAttempts {
		h.Attempts = h.Attempts[len(h.Attempts)-maxHistoryAttempts:]
	}
	for _, c := range in.Final {
		if c.Failed() && len(h.Failed) < maxFailedChecks {
			out, cut := tail(c.Output, maxFailedOutput)
			if cut {
				out = "…" + out
			}
			h.Failed = append(h.Failed, FailedCheck{Name: c.Name, Command: c.Command, Output: out})
		}
	}
	return h
}

// shrink drops what the history can lose to fit a body: first the failed
// checks' output, then the oldest attempts. It reports false when nothing
// is left to drop.
func (h *History) shrink() bool {
	switch {
	case len(h.Failed) > 0:
		h.Failed = nil
	case len(h.Attempts) > 1:
		h.Attempts = h.Attempts[1:]
	default:
		return false
	}
	return true
}

// section renders the visible attempt list and the hidden history; "" for
// an empty history.
func (h History) section() (string, error) {
	if len(h.Attempts) == 0 {
		return "", nil
	}
	data, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	out, err := execute("attempts", struct {
		History
		Hidden string
	}{h, marker.History(data)})
	return strings.TrimRight(out, "\n"), err
}

// ReplaceHistory puts h in place of the history section of body (or adds
// it at the end), for an attempt that published no new body: the pull
// request keeps its change and text, and its history gains the attempt.
// Only the section changes: what stands before and after it, the other
// markers included, stays where it was. The result stays under MaxBody:
// when not even the latest attempt fits, the body is returned as it was.
func ReplaceHistory(body string, h History) (string, error) {
	before, after := aroundHistory(body)
	for {
		sec, err := h.section()
		if err != nil {
			return "", err
		}
		out := marker.Keep(body, before+sec+after, marker.KindHistory)
		if len(out) < MaxBody {
			return out, nil
		}
		if !h.shrink() {
			return body, nil
		}
	}
}

// aroundHistory splits body around its history section: from the visible
// heading (or, without it, the hidden marker) to the end of the marker's
// line. A body without a history gets the new one at its end.
func aroundHistory(body string) (before, after string) {
	start, end, ok := marker.HistorySpan(body)
	if !ok {
		return strings.TrimRight(body, "\n") + "\n\n", "\n"
	}
	if i := strings.LastIndex(body[:start], historyHeading); i >= 0 {
		start = i
	}
	return body[:start], body[end:]
}
