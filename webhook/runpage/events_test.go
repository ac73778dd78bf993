package runpage

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// everyEvent is a run with one event of every type the application
// writes, built from the writers' own payload types, with s in the text
// a person reads of each.
func everyEvent(s string) []ledger.Payload {
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	edit := args(map[string]any{"edits": []map[string]string{{"path": "wc.go", "old_text": "n := 0\nreturn n", "new_text": "n := len(strings.Fields(s))\nreturn n // " + s}}})
	plan := args(map[string]any{"files": []string{"wc.go"}, "approach": "count fields " + s, "verification": "go test", "risks": "none"})
	return []ledger.Payload{
		&ledger.SetupSecretsGiven{Names: []string{"NPM_TOKEN"}},
		&ledger.SetupSecretsWithheld{Names: []string{"PYPI_TOKEN"}, Reason: "the run is for a fork " + s},
		&ledger.Command{Step: 0, Tool: "setup", CommandRecord: ledger.CommandRecord{Command: "go mod download", Duration: time.Second, Output: "downloaded " + s}},
		&ledger.SetupDetected{Commands: []report.DetectedCommand{{Command: "go mod download", Manifest: "go.mod"}}},
		&ledger.EgressRefused{Host: "evil.example", Port: 443, Phase: "setup", Command: "curl " + s, Reason: "not on the allowlist"},
		checkEvent(verify.CheckResult{Name: "test", Command: "go test ./...", Phase: verify.Baseline, Ran: true, ExitCode: 1, Runs: 1, Failures: 1, Output: "--- FAIL: TestCount " + s}),
		checkEvent(verify.CheckResult{Name: "vet", Command: "go vet ./...", Phase: verify.Baseline, Ran: true, Passed: true, Runs: 1}),
		&ledger.RunStart{Model: "openai:m", Tools: []string{"read_file", "edit", "run"}, Prompt: "Issue #7: " + s},
		&ledger.IssueImages{Images: []ledger.IssueImage{{Source: "https://github.com/user-attachments/assets/1", BytesIn: 900, Width: 40, Height: 30, SHA256: "ab12", Shown: true}, {Source: "https://evil.example/" + s, Dropped: "host evil.example is not GitHub's"}}},
		&ledger.UserMessage{Step: 1, From: "octocat", Text: "please keep the API " + s},
		&ledger.ModelTurn{Step: 1, Model: "openai:m", InputTokens: 900, OutputTokens: 40, Text: "I will plan " + s,
			ToolCalls: []ledger.RequestedCall{{ID: "c0", Name: "submit_plan", Arguments: plan}}},
		&ledger.ToolCall{Step: 1, CallID: "c0", Tool: "submit_plan", Arguments: plan, Result: "plan recorded"},
		&ledger.ModelTurn{Step: 2, Model: "openai:m", InputTokens: 1200, OutputTokens: 80, Text: "Now the fix",
			ToolCalls: []ledger.RequestedCall{{ID: "c1", Name: "edit", Arguments: edit}}},
		&ledger.ToolCall{Step: 2, CallID: "c1", Tool: "edit", Arguments: edit, Result: "edited wc.go", Changed: []string{"wc.go"}},
		&ledger.ToolCall{Step: 2, CallID: "c2", Tool: "read_file", Arguments: args(map[string]any{"path": "wc.go", "offset": 10}), Result: s, ErrorCode: "not_found"},
		&ledger.Command{Step: 2, CallID: "c3", Tool: "run", CommandRecord: ledger.CommandRecord{Command: "go test ./...", ExitCode: 0, Duration: 2 * time.Second, Output: "ok " + s}},
		&ledger.Compaction{Step: 3, Reason: "window", Replaced: 4, TokensBefore: 90000, TokensAfter: 30000,
			Summary: &ledger.SummaryCall{Model: "openai:small", Used: true, Summarised: 4, Text: "the tests passed " + s}},
		&ledger.DependencyEvent{DependencySetup: ledger.DependencySetup{Manifests: []string{"go.mod"},
			Commands: []report.DependencyCommand{{Command: "go mod download"}}, Fetched: []report.Dependency{{What: "Go module", Name: "golang.org/x/text", Version: "v0.42.0"}}}},
		&ledger.RunStop{Reason: "finished", Detail: "the model called finish " + s, Steps: 3, Summary: "Counted words " + s, Changed: []string{"wc.go"}},
		checkEvent(verify.CheckResult{Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, Passed: true, Runs: 1}),
		newTestEvent(verify.NewTestResult{NewTest: verify.NewTest{Dir: ".", Name: "TestCountWords", File: "wc_test.go", Added: true},
			Status: verify.FailsBefore, Command: "go test -run TestCountWords .", Output: "FAIL " + s}),
		&ledger.FindingEvent{Finding: findings.Finding{Kind: findings.TestSkipped, Path: "wc_test.go", Line: 3, Detail: "a test was skipped " + s}},
		&ledger.FindingEvent{Finding: findings.Finding{Kind: "scope", Path: "README.md", Detail: "outside the issue"}},
		&ledger.ServiceLog{Name: "db", Image: "postgres:16", Log: "ready to accept connections " + s},
		&ledger.ImageResolved{Service: "db", Ref: "registry.example/postgres:16", Use: "registry.example/postgres@sha256:" + strings.Repeat("a", 64), Digest: "sha256:" + strings.Repeat("a", 64), Pulled: true},
		&ledger.EgressRefusalsDropped{Count: 2040, Hosts: 3},
		&ledger.SetupSecretFiles{Files: []report.SecretFile{{Path: ".npmrc " + s, Names: []string{"NPM_TOKEN"}}, {Path: "npm/_cacache/x", Cache: true}}},
		&ledger.AdvisoryCheck{Path: "package.json", Ecosystem: "npm", Name: "lodash", Version: "4.17.20",
			Advisories: []ledger.AdvisoryRecord{{ID: "GHSA-35jh-r3h4-6jhm", Severity: "high", Summary: "Command Injection " + s}}},
		&ledger.Review{Model: "openai:small", Answer: args(map[string]any{"risks": []any{map[string]any{"kind": "scope", "detail": s}}}), Ignored: []string{"field verdict " + s}},
	}
}

// checkEvent and newTestEvent are verify's results as ledger events.
func checkEvent(c verify.CheckResult) ledger.Payload {
	p, err := verify.CheckPayload(c)
	if err != nil {
		panic(err)
	}
	return p
}

func newTestEvent(r verify.NewTestResult) ledger.Payload {
	p, err := verify.NewTestPayload(r)
	if err != nil {
		panic(err)
	}
	return p
}

// TestEveryEventTypeIsShown renders a run with every event type and
// checks that each is shown as itself, never as its JSON: every type of
// the ledger's closed set has a way to be shown.
func TestEveryEventTypeIsShown(t *testing.T) {
	events := everyEvent("fine")
	var types []string
	for _, e := range events {
		types = append(types, e.EventType())
	}
	for _, typ := range ledger.Types() {
		if !slices.Contains(types, typ) {
			t.Errorf("event type %q is not in the test's run", typ)
		}
	}
	for typ := range showers {
		if !slices.Contains(types, typ) {
			t.Errorf("the page shows %q, which no writer's payload in the test's run has", typ)
		}
	}
	log, err := ledger.Read(strings.NewReader(string(writeLedger(t, events...))))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range log.Records {
		if e := toEvent(r); e.Kind == "other" {
			t.Errorf("%s is shown as an unknown event: %+v", r.Type, e)
		}
	}
	page, err := Page(runstore.Record{ID: "all", Done: true, Ledger: writeLedger(t, events...), Result: []byte(`{"outcome":"verified","reason":"ok"}`)})
	if err != nil {
		t.Fatal(err)
	}
	body := string(page)
	for _, raw := range []string{"{&#34;", `{"`, "&#34;:", "duration_ns", "call_id"} {
		if strings.Contains(body, raw) {
			t.Errorf("the page shows raw JSON (%q)", raw)
		}
	}
	for _, want := range []string{
		`<td>vet</td><td>baseline</td><td>go vet ./...</td><td>passed</td>`, // checks as one table
		`<td>test</td><td>final</td>`,
		`<div class="del">-n := 0</div>`, `<div class="add">&#43;n := len(strings.Fields(s))</div>`, // edits as a diff
		"Approach:\ncount fields fine", // the plan as text
		`<td>test_skipped</td><td>wc_test.go:3</td>`, `<td>scope</td>`,
		"Connection refused: evil.example:443", "NPM_TOKEN", "PYPI_TOKEN", "Service db",
		"Context compacted before turn 3", "the tests passed fine", "Note from @octocat",
		`<td>TestCountWords</td><td>wc_test.go</td><td>fails before</td>`,
		"Go module golang.org/x/text v0.42.0", "Setup detected", "<td>go.mod</td>",
		"offset: 10\npath: wc.go", "error not_found",
		"Advisory database: npm lodash 4.17.20", "<td>GHSA-35jh-r3h4-6jhm</td><td>high</td>", "Review before publishing",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(body, "<th>check</th>"); n != 2 { // the baseline's checks together, then the final's
		t.Errorf("%d check tables, want 2 (baseline, final)", n)
	}
}

// TestEveryEventIsInert puts hostile text in every event and checks that
// none of it reaches the page as markup or control characters.
func TestEveryEventIsInert(t *testing.T) {
	page, err := Page(runstore.Record{ID: "evil", Done: true, Ledger: writeLedger(t, everyEvent(hostile)...), Body: []byte(hostile)})
	if err != nil {
		t.Fatal(err)
	}
	body := string(page)
	for _, bad := range []string{"<script", "<img", "onerror=alert(2)>", `href=`, "<a ", "\x1b", "\u202e", "\x00", "\x07"} {
		if strings.Contains(body, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if n := strings.Count(body, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 15 {
		t.Errorf("the hostile text is shown as text %d times; want it in most events", n)
	}
}
