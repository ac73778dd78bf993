package budget

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

const testRedisDB = 11 // each package its own DB: packages' tests run in parallel

var (
	issueA = tasks.Issue{InstallationID: 7, Owner: "Acme", Repo: "Widgets", Number: 1}
	issueB = tasks.Issue{InstallationID: 7, Owner: "acme", Repo: "gadgets", Number: 2}
	other  = tasks.Issue{InstallationID: 8, Owner: "else", Repo: "where", Number: 3}
)

// The repository cap refuses the next job of that repository only; the
// installation cap every repository of the installation; both reset with
// the month (UTC).
func TestMonthlyCaps(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	s := &Store{Redis: redistest.Client(t, testRedisDB), Caps: Caps{Installation: 5, Repository: 2}, Now: func() time.Time { return now }}
	check := func(s *Store, i tasks.Issue) error {
		if err := s.Reserve(ctx, i, "check", 0); err != nil {
			return err
		}
		return s.Settle(ctx, i, "check", 0)
	}
	if err := check(s, issueA); err != nil {
		t.Fatalf("nothing spent: %v", err)
	}
	if err := s.Add(ctx, issueA, 1.5); err != nil {
		t.Fatal(err)
	}
	if err := check(s, issueA); err != nil {
		t.Fatalf("under the caps: %v", err)
	}
	if err := s.Add(ctx, issueA, 0.5); err != nil {
		t.Fatal(err)
	}
	err := check(s, tasks.Issue{InstallationID: 7, Owner: "ACME", Repo: "widgets", Number: 9})
	r, ok := AsRefusal(err)
	if !ok || r.Scope != "repository" || r.SpentUSD != 2 || r.Month != "2026-12" || !r.ResetsAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("repository cap reached (any case of its name): %v", err)
	}
	if !strings.Contains(r.Error(), "$2.00") || !strings.Contains(r.Error(), "2027-01-01") {
		t.Errorf("refusal %q does not say the cap and the reset", r.Error())
	}
	if err := check(s, issueB); err != nil {
		t.Fatalf("another repository of the installation: %v", err)
	}
	if err := s.Add(ctx, issueB, 3); err != nil {
		t.Fatal(err)
	}
	if r, ok := AsRefusal(check(s, issueB)); !ok || r.Scope != "installation" || r.SpentUSD != 5 {
		t.Fatalf("installation cap reached: %+v %v", r, ok)
	}
	if err := check(s, other); err != nil {
		t.Fatalf("another installation: %v", err)
	}
	now = now.Add(2 * time.Hour) // January
	if err := check(s, issueA); err != nil {
		t.Fatalf("after the month reset: %v", err)
	}
	if err := s.Add(ctx, issueA, -1); err != nil {
		t.Fatal(err)
	}
	if inst, repo, err := s.Spent(ctx, issueA); err != nil || inst != 0 || repo != 0 {
		t.Errorf("a negative amount was counted: %v %v %v", inst, repo, err)
	}
	// No caps: nothing is ever refused.
	free := &Store{Redis: s.Redis, Now: s.Now}
	if err := check(free, issueB); err != nil {
		t.Errorf("no caps: %v", err)
	}
}
