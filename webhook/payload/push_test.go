package payload

import (
	"encoding/json"
	"testing"

	"github.com/google/go-github/v62/github"
)

// The push fields must read as go-github reads them.
func TestParsePushMatchesGoGitHub(t *testing.T) {
	body := withInstallation(t, fixture(t, "push.json"))
	got, err := ParsePush(body)
	if err != nil {
		t.Fatal(err)
	}
	var ev github.PushEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	want := Push{Ref: ev.GetRef(), After: ev.GetAfter(), Deleted: ev.GetDeleted(), DefaultBranch: ev.GetRepo().GetDefaultBranch(),
		Repo:         Repo{Owner: ev.GetRepo().GetOwner().GetLogin(), Name: ev.GetRepo().GetName()},
		Sender:       User{Login: ev.GetSender().GetLogin(), Type: ev.GetSender().GetType()},
		Installation: ev.GetInstallation().GetID()}
	if got != want || !got.Deleted || got.DefaultBranch != "master" || got.Installation != 4242 {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if _, err := ParsePush([]byte(`{"ref": 7}`)); err == nil {
		t.Error("a push whose ref is a number parsed")
	}
}
