package githubjob

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// permOnly answers Permission from a map and counts the lookups; the
// rest of attemptSource is not used by writers.
type permOnly struct {
	attemptSource
	perms   map[string]string
	lookups int
}

func (p *permOnly) Permission(_ context.Context, _ tasks.Issue, user string) (githubapi.Permission, error) {
	p.lookups++
	return githubapi.Permission{Permission: p.perms[user]}, nil
}

func TestWritersFilter(t *testing.T) {
	gh := &permOnly{perms: map[string]string{"maria": "write", "admin": "admin", "reader": "read"}}
	w := &writers{gh: gh, bot: "app[bot]"}
	t0 := time.Unix(1_800_000_000, 0)
	cs := []githubapi.Comment{
		{Author: "maria", Body: "old", Created: t0},
		{Author: "reader", Body: "do something else", Created: t0.Add(time.Hour)},
		{Author: "app[bot]", Body: "status", Created: t0.Add(time.Hour)},
		{Author: "dependabot[bot]", Body: "bump", Created: t0.Add(time.Hour)},
		{Author: "admin", Body: "new", Created: t0.Add(2 * time.Hour)},
		{Author: "maria", Body: "newer", Created: t0.Add(3 * time.Hour)},
	}
	got, err := w.filter(context.Background(), cs, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Body != "new" || got[1].Body != "newer" {
		t.Fatalf("kept %+v, want the writers' comments since, oldest first", got)
	}
	if gh.lookups != 3 {
		t.Errorf("%d permission lookups, want 3 (one per person, none for bots)", gh.lookups)
	}

	// Many commenters: the lookups stop at the bound.
	gh = &permOnly{perms: map[string]string{}}
	w = &writers{gh: gh}
	var many []githubapi.Comment
	for i := range 500 {
		many = append(many, githubapi.Comment{Author: fmt.Sprintf("user%d", i), Body: "+1"})
	}
	if got, err := w.filter(context.Background(), many, time.Time{}); err != nil || len(got) != 0 {
		t.Fatalf("%+v, %v", got, err)
	}
	if gh.lookups != maxAuthorLookups {
		t.Errorf("%d lookups for 500 commenters, want %d", gh.lookups, maxAuthorLookups)
	}
}
