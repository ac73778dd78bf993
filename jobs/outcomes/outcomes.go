// Package outcomes owns what later happened to each agent pull request:
// its classification from GitHub's state (merged, closed unmerged, still
// open, superseded; and for a merge, whether a human committed or
// reviewed), kept in Redis per pull request with the run's model and
// cost, and the figures /metrics derives from them (collector.go).
//
// A run judged by what the repository did with its pull request, not by
// what the run said about itself: the same question GitHub's agentic
// workflows answer with accepted, rejected and pending.
package outcomes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// States of an agent pull request.
const (
	StateMerged     = "merged"
	StateClosed     = "closed"     // closed unmerged
	StateOpen       = "open"       // still open
	StateSuperseded = "superseded" // closed because a newer agent pull request replaced it
)

// Key is the Redis hash holding every record, one field per pull request
// (Record.field): classifying again replaces the field, so a redelivered
// event or a periodic check never counts a pull request twice.
const Key = "patchwright:outcomes"

// Record is one agent pull request's outcome.
type Record struct {
	Installation int64  `json:"installation"`
	Repo         string `json:"repo"` // owner/name
	PR           int    `json:"pr"`
	State        string `json:"state"`
	// HumanCommit: some commit on the pull request was not the app's.
	HumanCommit bool `json:"human_commit"`
	// HumanReview: someone not a bot submitted a review.
	HumanReview bool      `json:"human_review"`
	OpenedAt    time.Time `json:"opened_at"`
	ClosedAt    time.Time `json:"closed_at,omitzero"`
	// Model and CostUSD are the run's, as it stored them; CostKnown is
	// false when the model had no price.
	Model     string  `json:"model,omitempty"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
	CostKnown bool    `json:"cost_known,omitempty"`
}

// field names r in Key.
func (r Record) field() string {
	return strconv.FormatInt(r.Installation, 10) + "/" + strings.ToLower(r.Repo) + "#" + strconv.Itoa(r.PR)
}

// fieldOf is the field of i's number (a pull request's or an issue's).
func fieldOf(i tasks.Issue) string {
	return Record{Installation: i.InstallationID, Repo: i.Owner + "/" + i.Repo, PR: i.Number}.field()
}

// Facts are what GitHub says about one agent pull request, as Classify
// reads them.
type Facts struct {
	Installation int64
	Repo         string
	PR           int
	State        string // GitHub's: open or closed
	Merged       bool
	OpenedAt     time.Time
	ClosedAt     time.Time
	// CommitAuthors are the logins (or git names, when GitHub links no
	// account) of every commit on the pull request.
	CommitAuthors []string
	// Reviewers are the logins of every submitted review.
	Reviewers []string
	// Superseded: a newer agent pull request for the same issue replaced
	// this one (it was closed for it).
	Superseded bool
}

// ErrBadFacts is Classify's answer to facts that cannot be an agent pull
// request's.
var ErrBadFacts = errors.New("outcomes: bad facts")

// Classify turns facts into a record; appLogin is the app's bot login
// ("patchwright[bot]"). Model and cost are left for the caller.
func Classify(f Facts, appLogin string) (Record, error) {
	switch {
	case f.Installation <= 0 || f.PR <= 0 || !strings.Contains(f.Repo, "/"):
		return Record{}, fmt.Errorf("%w: installation %d, repository %q, pull request %d", ErrBadFacts, f.Installation, f.Repo, f.PR)
	case f.State != "open" && f.State != "closed":
		return Record{}, fmt.Errorf("%w: state %q", ErrBadFacts, f.State)
	case f.Merged && f.State != "closed":
		return Record{}, fmt.Errorf("%w: merged but %s", ErrBadFacts, f.State)
	}
	r := Record{Installation: f.Installation, Repo: f.Repo, PR: f.PR, OpenedAt: f.OpenedAt.UTC()}
	switch {
	case f.Merged:
		r.State = StateMerged
	case f.State == "open":
		r.State = StateOpen
	case f.Superseded:
		r.State = StateSuperseded
	default:
		r.State = StateClosed
	}
	if f.State == "closed" {
		r.ClosedAt = f.ClosedAt.UTC()
	}
	for _, a := range f.CommitAuthors {
		r.HumanCommit = r.HumanCommit || !strings.EqualFold(a, appLogin)
	}
	for _, a := range f.Reviewers {
		r.HumanReview = r.HumanReview || !isBot(a, appLogin)
	}
	return r, nil
}

// isBot: the app itself, or any GitHub App's "name[bot]" account.
func isBot(login, appLogin string) bool {
	return strings.EqualFold(login, appLogin) || strings.HasSuffix(strings.ToLower(login), "[bot]")
}

// Store keeps records in Redis.
type Store struct {
	Redis redis.UniversalClient
	// Keep is how long a record (and its run notes) stays after its last
	// write, and the clock; the zero Keep is DefaultRetention on
	// time.Now, as the run records'.
	runstore.Keep
}

// Put stores r, replacing the pull request's earlier record.
func (s *Store) Put(ctx context.Context, r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p := s.Redis.TxPipeline()
	p.HSet(ctx, Key, r.field(), data)
	s.written(ctx, p, "pr:"+r.field())
	if r.State == StateOpen {
		// Checked again after the period, whoever classified it.
		p.ZAddNX(ctx, PendingKey, redis.Z{Score: float64(s.Now().Add(DefaultCheckAfter).UnixMilli()), Member: r.field()})
	} else {
		p.ZRem(ctx, PendingKey, r.field()) // decided: nothing more to check
	}
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("store outcome of %s#%d: %w", r.Repo, r.PR, err)
	}
	return nil
}

// All reads every record; one that does not decode is skipped and
// counted in bad, so one corrupt field does not hide the rest.
// Records past the retention are pruned first.
func (s *Store) All(ctx context.Context) (recs []Record, bad int, err error) {
	if _, err := s.prune(ctx); err != nil {
		return nil, 0, err
	}
	m, err := s.Redis.HGetAll(ctx, Key).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("read outcomes: %w", err)
	}
	for _, v := range m {
		var r Record
		if json.Unmarshal([]byte(v), &r) != nil {
			bad++
			continue
		}
		recs = append(recs, r)
	}
	return recs, bad, nil
}
