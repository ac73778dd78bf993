package findings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Kinds of finding the review before publishing produces (docs/design.md
// §4.5): the jobs/pipeline gate asks the advisory database and a review
// model, and hands their answers here as plain findings. Scope is shared
// with Analyze.
const (
	// Advisory: a dependency the change adds or re-versions has a known
	// advisory of high or critical severity. It blocks.
	Advisory = "advisory"
	// AdvisoryLow: a known advisory of low, medium or unknown severity.
	// Listed for review.
	AdvisoryLow = "advisory_low"
	// Security: the review model reports a security risk (data sent out,
	// an authorization check removed). It blocks.
	Security = "security"
	// Injection: the review model reports an instruction to a model
	// copied from the issue into the code or docs. It blocks.
	Injection = "injection"
	// Behaviour: the review model reports a change of behaviour the
	// issue did not ask for. Listed for review.
	Behaviour = "behaviour"
	// ReviewFailed: the review before publishing did not complete (the
	// model failed, its budget, an answer that could not be read), so
	// nothing looked at what the change does. It blocks.
	ReviewFailed = "review_failed"
)

// reviewKinds are the kinds a review model may report.
var reviewKinds = []string{Security, Behaviour, Scope, Injection}

// Severities a review model may give a risk.
var reviewSeverities = []string{"low", "medium", "high"}

// Bounds of a review model's answer: past MaxReviewAnswer bytes it is
// refused whole; past maxReviewRisks risks the rest are counted, not
// kept; a risk's detail is cut at maxRiskDetail characters.
const (
	MaxReviewAnswer = 16 << 10
	maxReviewRisks  = 20
	maxRiskDetail   = 300
)

// IsGate reports whether a finding of this kind is one the review before
// publishing raised that blocks verified: the pull request is then a
// draft whatever `draft:` says, and the finding is listed first.
func IsGate(kind string) bool {
	switch kind {
	case Advisory, Security, Injection, ReviewFailed:
		return true
	}
	return false
}

// ReviewAnswer is a review model's answer, read: the risks kept as
// findings, and what was left out of it, one note each.
type ReviewAnswer struct {
	Findings []Finding
	Ignored  []string
}

// reviewRisk is one entry of the answer's "risks".
type reviewRisk struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Detail   string `json:"detail"`
}

// ParseReview reads a review model's answer: one JSON object
// {"risks":[{"kind","severity","path","line","detail"}]}, optionally in
// one Markdown code fence. The answer is data: any other field (a
// "verdict", a claim that the change is verified) is ignored and noted,
// and a risk is only ever a finding, which can block verified and never
// grant it. changed are the change's paths: a risk naming another file
// keeps its words but not the path. text must already be stripped of
// what a reader would not see (agent.Strip).
func ParseReview(text string, changed []string) (ReviewAnswer, error) {
	if len(text) > MaxReviewAnswer {
		return ReviewAnswer{}, fmt.Errorf("the answer is %d bytes, over the %d-byte limit", len(text), MaxReviewAnswer)
	}
	raw := unfence(strings.TrimSpace(text))
	if raw == "" {
		return ReviewAnswer{}, fmt.Errorf("the answer is empty")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &top); err != nil {
		return ReviewAnswer{}, fmt.Errorf("the answer is not the JSON object asked for: %v", err)
	}
	var ans ReviewAnswer
	for _, k := range sortedKeys(top) {
		if k != "risks" {
			ans.Ignored = append(ans.Ignored, fmt.Sprintf("field %q is not part of the answer and was ignored", k))
		}
	}
	risksRaw, ok := top["risks"]
	if !ok {
		return ReviewAnswer{}, fmt.Errorf(`the answer has no "risks" list`)
	}
	var risks []json.RawMessage
	if err := json.Unmarshal(risksRaw, &risks); err != nil {
		return ReviewAnswer{}, fmt.Errorf(`"risks" is not a list: %v`, err)
	}
	for i, r := range risks {
		if len(ans.Findings) == maxReviewRisks {
			ans.Ignored = append(ans.Ignored, fmt.Sprintf("%d risks past the first %d were not kept", len(risks)-i, maxReviewRisks))
			break
		}
		f, note := readRisk(r, changed)
		if note != "" {
			ans.Ignored = append(ans.Ignored, fmt.Sprintf("risk %d: %s", i+1, note))
		}
		if f != nil {
			ans.Findings = append(ans.Findings, *f)
		}
	}
	return ans, nil
}

// readRisk reads one risk; a note says what was wrong with it or left
// out, and a nil finding that it was not kept at all.
func readRisk(raw json.RawMessage, changed []string) (*Finding, string) {
	var r reviewRisk
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var note string
	if err := dec.Decode(&r); err != nil {
		// Read again without the strict check: an extra field costs
		// only itself.
		r = reviewRisk{}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Sprintf("not a risk object (%v); left out", err)
		}
		note = "fields other than kind, severity, path, line and detail were ignored"
	}
	switch {
	case !slices.Contains(reviewKinds, r.Kind):
		return nil, fmt.Sprintf("kind %q is not one of %s; left out", cut(r.Kind, 40), strings.Join(reviewKinds, ", "))
	case !slices.Contains(reviewSeverities, r.Severity):
		return nil, fmt.Sprintf("severity %q is not one of %s; left out", cut(r.Severity, 40), strings.Join(reviewSeverities, ", "))
	}
	detail := strings.Join(strings.Fields(r.Detail), " ")
	if detail == "" {
		return nil, "it has no detail; left out"
	}
	f := &Finding{Kind: r.Kind, Path: r.Path, Line: max(r.Line, 0)}
	if !slices.Contains(changed, r.Path) {
		if r.Path != "" {
			note = strings.TrimPrefix(note+"; ", "; ") + fmt.Sprintf("path %q is not a changed file, so it is not shown", cut(r.Path, 80))
		}
		f.Path, f.Line = "", 0
	}
	f.Detail = fmt.Sprintf("The review model reports a %s-severity %s risk: %s", r.Severity, r.Kind, cut(detail, maxRiskDetail))
	return f, note
}

// unfence removes one surrounding Markdown code fence, as models often
// wrap JSON in one.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	s = strings.TrimSuffix(s[3:], "```")
	if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
		s = s[nl+1:]
	}
	return strings.TrimSpace(s)
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
