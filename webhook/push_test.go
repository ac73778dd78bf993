package webhook

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// push is a push of ref to after, as GitHub sends it to the app.
func push(t testing.TB, ref, after string, deleted bool) []byte {
	return fixturePayload(t, "push.json", func(m map[string]any) {
		m["ref"], m["after"], m["deleted"] = ref, after, deleted
	})
}

// Pushes that do not move the default branch start nothing and need no
// GitHub call; bad ones are 400.
func TestPushesThatDoNothing(t *testing.T) {
	e := newEnv(t)
	cases := map[string]struct {
		body []byte
		want int
		msg  string
	}{
		"tag":              {push(t, "refs/tags/v1", someSHA, false), http.StatusOK, "not a branch"},
		"deleted branch":   {push(t, "refs/heads/master", "0000000000000000000000000000000000000000", true), http.StatusOK, "not a branch that moved"},
		"other branch":     {push(t, "refs/heads/feature", someSHA, false), http.StatusOK, "not the default branch"},
		"agent branch":     {push(t, "refs/heads/agent/issue-7", someSHA, false), http.StatusOK, "not the default branch"},
		"bad after":        {push(t, "refs/heads/master", "nope", false), http.StatusBadRequest, "after"},
		"ref not a string": {fixturePayload(t, "push.json", func(m map[string]any) { m["ref"] = 5 }), http.StatusBadRequest, "malformed"},
		"no installation": {fixturePayload(t, "push.json", func(m map[string]any) {
			m["ref"], m["after"], m["deleted"] = "refs/heads/master", someSHA, false
			delete(m, "installation")
		}), http.StatusOK, "no installation"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			rec := e.deliver("push", fmt.Sprintf("push-%d", i), tc.body)
			expectStatus(t, rec, tc.want)
			if !strings.Contains(rec.Body.String(), tc.msg) {
				t.Errorf("answer %q, want it to say %q", rec.Body.String(), tc.msg)
			}
		})
	}
	if n := len(e.tasks(tasks.QueueAgent)); n != 0 {
		t.Errorf("%d agent tasks, want none", n)
	}
}
