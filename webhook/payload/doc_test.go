package payload

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

// One scan serves the handler's parser and the replay check: both must
// read what they would read alone, whatever the order of the calls.
func TestScanServesParserAndIdentity(t *testing.T) {
	body := withInstallation(t, fixture(t, "issues.labeled.json"))
	var m struct {
		Action string
		Repo   struct{ ID json.RawMessage } `json:"repository"`
		Issue  struct {
			ID        json.RawMessage
			Number    int
			UpdatedAt json.RawMessage `json:"updated_at"`
		}
		Label    struct{ Name json.RawMessage }
		Assignee struct{ ID json.RawMessage }
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	doc := Scan("issues", body)
	action, fields, ok, err := doc.Identity()
	if err != nil || !ok || action != "labeled" {
		t.Fatalf("Identity = %q, %v, %v", action, ok, err)
	}
	want := []string{`"labeled"`, string(m.Repo.ID), string(m.Issue.ID), string(m.Label.Name), string(m.Issue.UpdatedAt), string(m.Assignee.ID)}
	if !slices.Equal(fields, want) {
		t.Errorf("fields %q, want %q", fields, want)
	}
	ev, err := doc.Issues()
	if err != nil || ev.Issue.Number != m.Issue.Number || ev.Action != "labeled" || ev.Installation != 4242 {
		t.Errorf("Issues = %+v, %v", ev, err)
	}
	if alone, _ := ParseIssues(body); !equal(alone, ev) {
		t.Errorf("scanned once %+v, alone %+v", ev, alone)
	}
	// The same body read as another event is a programming error, not a
	// decode of the wrong fields.
	if _, err := doc.IssueComment(); err == nil {
		t.Error("an issues scan decoded as issue_comment")
	}
}

// An event with no parser or identity is only validated, as json.Valid
// would; a malformed body fails every reader of its scan.
func TestScanValidatesOtherEvents(t *testing.T) {
	for _, body := range []string{`{"zen":"x"}`, `[1,2]`, `{"a":`, `{"a":1}x`} {
		if got, want := Scan("ping", []byte(body)).Err() == nil, json.Valid([]byte(body)); got != want {
			t.Errorf("Scan(ping, %s) valid = %v, want %v", body, got, want)
		}
	}
	doc := Scan("issues", []byte(`{"action":"labeled","issue":{"id":1`))
	if _, err := doc.Issues(); err == nil {
		t.Error("Issues of a malformed body")
	}
	if _, _, _, err := doc.Identity(); err == nil {
		t.Error("Identity of a malformed body")
	}
}

// An assignment names its assignee, and two assignees of one change are
// two meanings.
func TestAssigneeDecodedAndIdentifies(t *testing.T) {
	body := func(login string, id int) []byte {
		return []byte(`{"action":"assigned","assignee":{"login":"` + login + `","id":` + strconv.Itoa(id) + `},` +
			`"issue":{"id":1,"number":7,"updated_at":"2026-01-01T00:00:00Z","assignee":{"login":"x","id":9}},"repository":{"id":2,"name":"r","owner":{"login":"o"}}}`)
	}
	ev, err := ParseIssues(body("patchwright[bot]", 5))
	if err != nil || ev.Assignee != "patchwright[bot]" || ev.Action != "assigned" {
		t.Fatalf("Issues = %+v, %v", ev, err)
	}
	_, a, _, _ := Scan("issues", body("a", 5)).Identity()
	_, b, _, _ := Scan("issues", body("b", 6)).Identity()
	if slices.Equal(a, b) {
		t.Fatalf("two assignees, one identity %q", a)
	}
}
