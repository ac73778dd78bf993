// Package budget keeps the month's estimated model spend per installation
// and per repository in Redis, and says when a monthly cap is reached, so
// that new jobs are refused until the month (UTC) resets. A run reserves
// its per-run cap before it starts and settles its cost after (see
// Reserve), so runs going at once cannot overspend a cap together.
package budget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// keyTTL outlives the month a key counts, so a late read still finds it.
const keyTTL = 40 * 24 * time.Hour

// Caps are the operator's monthly caps in US dollars; zero means none.
type Caps struct {
	Installation float64
	Repository   float64
}

// Store keeps the spend. Now is the clock (default time.Now).
type Store struct {
	Redis redis.UniversalClient
	Caps  Caps
	Now   func() time.Time
}

// Refusal says which cap is reached; its Error is the sentence the status
// comment shows.
type Refusal struct {
	Scope    string // "installation" or "repository"
	CapUSD   float64
	SpentUSD float64
	// ReservedUSD is what runs still going hold; RunCapUSD is what the
	// refused run would have held.
	ReservedUSD float64
	RunCapUSD   float64
	Month       string    // "2026-12"
	ResetsAt    time.Time // the first instant of the next month, UTC
}

func (r *Refusal) Error() string {
	state := fmt.Sprintf("is spent ($%.2f estimated for %s)", r.SpentUSD, r.Month)
	if r.ReservedUSD > 0 || r.SpentUSD+r.ReservedUSD < r.CapUSD {
		// Not spent yet: held by runs going, or too little left for this
		// run's cap.
		state = fmt.Sprintf("is spent or held ($%.2f estimated for %s, $%.2f held by runs still going, and this run may cost up to $%.2f)",
			r.SpentUSD, r.Month, r.ReservedUSD, r.RunCapUSD)
	}
	return fmt.Sprintf("the %s's monthly model budget of $%.2f %s, so no new job starts until it resets on %s",
		r.Scope, r.CapUSD, state, r.ResetsAt.Format("2006-01-02 15:04 UTC"))
}

// AsRefusal finds a Refusal in err.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func month(t time.Time) string { return t.Format("2006-01") }

func nextMonth(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}

func installationKey(m string, id int64) string {
	return jobs.KeyPrefix + "spend:" + m + ":installation:" + strconv.FormatInt(id, 10)
}

func repositoryKey(m string, i tasks.Issue) string {
	return jobs.KeyPrefix + "spend:" + m + ":repository:" + strings.ToLower(i.Owner+"/"+i.Repo)
}

// Add counts usd against the issue's installation and repository for the
// current month. A negative or zero amount is not counted.
func (s *Store) Add(ctx context.Context, issue tasks.Issue, usd float64) error {
	if usd <= 0 {
		return nil
	}
	m := month(s.now())
	pipe := s.Redis.TxPipeline()
	for _, k := range []string{installationKey(m, issue.InstallationID), repositoryKey(m, issue)} {
		pipe.IncrByFloat(ctx, k, usd)
		pipe.Expire(ctx, k, keyTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("count the spend of %s: %w", issue, err)
	}
	return nil
}

// Spent is the month's spend of the issue's installation and repository.
func (s *Store) Spent(ctx context.Context, issue tasks.Issue) (installation, repository float64, err error) {
	m := month(s.now())
	vals, err := s.Redis.MGet(ctx, installationKey(m, issue.InstallationID), repositoryKey(m, issue)).Result()
	if err != nil {
		return 0, 0, fmt.Errorf("read the month's spend of %s: %w", issue, err)
	}
	f := func(v any) float64 {
		str, _ := v.(string)
		x, _ := strconv.ParseFloat(str, 64)
		return x
	}
	return f(vals[0]), f(vals[1]), nil
}
