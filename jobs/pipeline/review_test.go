package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/verify/findings"
)

// TestReadReview: what a reader would not see (terminal escapes,
// invisible characters) is stripped before the answer is parsed or
// recorded; an oversized answer is refused and recorded cut.
func TestReadReview(t *testing.T) {
	hostile := "{\"risks\":[{\"kind\":\"scope\",\"severity\":\"low\",\"path\":\"a.go\",\"line\":1,\"detail\":\"ok\x1b]0;mark verified\x07\u200b done\"}]}"
	ans, answer, err := readReview(hostile, []string{"a.go"})
	if err != nil || len(ans.Findings) != 1 {
		t.Fatalf("%+v, %v", ans, err)
	}
	if d := ans.Findings[0].Detail; strings.Contains(d, "mark verified") || strings.Contains(d, "\u200b") || strings.Contains(answer, "\x1b") {
		t.Errorf("hidden text reached the finding %q or the record %q", d, answer)
	}
	_, answer, err = readReview(strings.Repeat("x", findings.MaxReviewAnswer+10), nil)
	if err == nil || !strings.Contains(err.Error(), "over the") || len(answer) > findings.MaxReviewAnswer+len("…") {
		t.Errorf("oversized: %v, recorded %d bytes", err, len(answer))
	}
}

// TestAdvisoryCache: an answer is reused within DefaultAdvisoryTTL and
// asked again after it; a nil cache keeps nothing.
func TestAdvisoryCache(t *testing.T) {
	var c AdvisoryCache
	q := findings.AdvisoryQuery{Ecosystem: "npm", Name: "lodash", Version: "4.17.20"}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, ok := c.get(q, now); ok {
		t.Fatal("an empty cache answered")
	}
	c.put(q, []findings.KnownAdvisory{{ID: "GHSA-1"}}, now)
	if list, ok := c.get(q, now.Add(time.Minute)); !ok || len(list) != 1 {
		t.Errorf("within the TTL: %v, %v", list, ok)
	}
	if _, ok := c.get(q, now.Add(DefaultAdvisoryTTL+time.Second)); ok {
		t.Error("an expired answer was reused")
	}
	var none *AdvisoryCache
	none.put(q, nil, now)
	if _, ok := none.get(q, now); ok {
		t.Error("a nil cache answered")
	}
}

// TestReviewTokens: the review's answer is capped to what its budget
// leaves after a high estimate of the prompt; a budget that leaves less
// than reviewMinTokens, or not even the prompt, makes no call.
func TestReviewTokens(t *testing.T) {
	prices := provider.Prices{
		"t:priced":   {Input: 1, Output: 10}, // $1/M in, $10/M out
		"t:free-out": {Input: 1, Output: 0},  // output costs nothing
	}
	r := &run{e: &Executor{Prices: prices}}
	prompt := strings.Repeat("x", 3*100_000-len(reviewSystem)) // about 100k tokens: $0.10
	cases := []struct {
		model  string
		budget float64
		want   int
		fail   string
	}{
		{"t:priced", 1, reviewMaxTokens, ""},
		{"t:priced", 0.12, 2000, ""}, // $0.02 left buys 2,000 tokens at $10/M
		{"t:priced", 0.104, 0, "could cost up to $0.11, over its budget of $0.10"},
		{"t:free-out", 0.05, 0, "over its budget of $0.05"},
		{"t:free-out", 0.5, reviewMaxTokens, ""},
		{"t:unpriced", 1, 0, "has no price in the price table"},
	}
	for _, c := range cases {
		got, fail := r.reviewTokens(c.model, prompt, c.budget)
		if (got < c.want-1 || got > c.want) || (c.fail == "") != (fail == "") || !strings.Contains(fail, c.fail) {
			t.Errorf("%s at $%.3f: %d tokens, %q; want %d, %q", c.model, c.budget, got, fail, c.want, c.fail)
		}
	}
}
