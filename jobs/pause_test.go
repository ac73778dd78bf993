package jobs

import (
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/tasks"
)

func TestParseScope(t *testing.T) {
	for _, c := range []struct {
		inst int64
		repo string
		want Scope
		err  string
	}{
		{0, "", Scope{}, ""},
		{7, "", Scope{Installation: 7}, ""},
		{0, "Octo/Cat", Scope{Repo: "octo/cat"}, ""},
		{7, "o/r", Scope{}, "not both"},
		{-1, "", Scope{}, "above 0"},
		{0, "octocat", Scope{}, "OWNER/NAME"},
		{0, "o/r/x", Scope{}, "OWNER/NAME"},
		{0, "/r", Scope{}, "OWNER/NAME"},
	} {
		got, err := ParseScope(c.inst, c.repo)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseScope(%d, %q) error %v, want %q", c.inst, c.repo, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseScope(%d, %q) = %+v, %v; want %+v", c.inst, c.repo, got, err, c.want)
		}
	}
}

// Pauses cover their scope only; the widest wins; a second pause keeps the
// first; resume lifts one scope and its answers.
func TestPauseScopes(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	a := tasks.Issue{InstallationID: 1, Owner: "O", Repo: "R", Number: 1}
	b := tasks.Issue{InstallationID: 2, Owner: "x", Repo: "y", Number: 1}
	if _, paused, err := q.PausedFor(ctx, a); err != nil || paused {
		t.Fatalf("before any pause: %v, %v", paused, err)
	}
	if _, set, err := q.Pause(ctx, Scope{Repo: "o/r"}, "ann"); err != nil || !set {
		t.Fatalf("pause = %v, %v", set, err)
	}
	if p, set, _ := q.Pause(ctx, Scope{Repo: "o/r"}, "bob"); set || p.By != "ann" {
		t.Errorf("second pause: set %v by %q, want the first kept", set, p.By)
	}
	if p, paused, _ := q.PausedFor(ctx, a); !paused || p.Scope.Repo != "o/r" {
		t.Errorf("issue of o/r: paused %v by %+v", paused, p)
	}
	if _, paused, _ := q.PausedFor(ctx, b); paused {
		t.Error("another repository is paused")
	}
	p, _, _ := q.PausedFor(ctx, a)
	if first, _ := q.ClaimPauseAnswer(ctx, p, a); !first {
		t.Error("first answer not claimed")
	}
	if again, _ := q.ClaimPauseAnswer(ctx, p, a); again {
		t.Error("answer claimed twice")
	}
	if _, _, err := q.Pause(ctx, Scope{}, "cat"); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := q.PausedFor(ctx, b); p.By != "cat" {
		t.Errorf("global pause not seen: %+v", p)
	}
	if ps, _ := q.Pauses(ctx); len(ps) != 2 || ps[0].Scope != (Scope{}) {
		t.Errorf("pauses %+v, want everything first, then o/r", ps)
	}
	for _, s := range []Scope{{}, {Repo: "o/r"}} {
		if ok, err := q.Resume(ctx, s); err != nil || !ok {
			t.Fatalf("resume %s = %v, %v", s, ok, err)
		}
	}
	if ok, _ := q.Resume(ctx, Scope{Repo: "o/r"}); ok {
		t.Error("resumed a scope that was not paused")
	}
	if _, paused, _ := q.PausedFor(ctx, a); paused {
		t.Error("still paused after resume")
	}
	if _, set, _ := q.Pause(ctx, Scope{Repo: "o/r"}, "ann"); !set {
		t.Fatal("pause again")
	}
	p, _, _ = q.PausedFor(ctx, a)
	if first, _ := q.ClaimPauseAnswer(ctx, p, a); !first {
		t.Error("a new pause does not answer again: resume kept the answers")
	}
}
