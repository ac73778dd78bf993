package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/verify/findings"
)

// AdvisoryLookup asks the GitHub advisory database (REST
// `GET /advisories?ecosystem=…&affects=name@version`) which advisories
// affect one dependency; the GitHub worker's is the app's client.
type AdvisoryLookup interface {
	Advisories(ctx context.Context, q findings.AdvisoryQuery) ([]findings.KnownAdvisory, error)
}

// Bounds of AdvisoryCache.
const (
	// DefaultAdvisoryTTL is how long an answer is reused: advisories are
	// published by the hour, not the second.
	DefaultAdvisoryTTL = time.Hour
	// maxAdvisoryEntries bounds the cache; past it, it starts again.
	maxAdvisoryEntries = 10_000
)

// AdvisoryCache keeps the advisory database's answers in the worker's
// memory for DefaultAdvisoryTTL, so that many runs touching one lockfile
// do not ask GitHub the same question. A failed lookup is not kept. Safe
// for concurrent use; the zero value is ready.
type AdvisoryCache struct {
	mu      sync.Mutex
	entries map[findings.AdvisoryQuery]advisoryEntry
}

type advisoryEntry struct {
	at   time.Time
	list []findings.KnownAdvisory
}

func (c *AdvisoryCache) get(q findings.AdvisoryQuery, now time.Time) ([]findings.KnownAdvisory, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[q]
	if !ok || now.Sub(e.at) > DefaultAdvisoryTTL {
		return nil, false
	}
	return e.list, true
}

func (c *AdvisoryCache) put(q findings.AdvisoryQuery, list []findings.KnownAdvisory, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxAdvisoryEntries {
		c.entries = map[findings.AdvisoryQuery]advisoryEntry{}
	}
	c.entries[q] = advisoryEntry{at: now, list: list}
}

// checkAdvisories looks each dependency the change adds or re-versions
// up in the advisory database (a range as the version its lockfile
// holds, else its lower bound: findings.AdvisoryChecks), records each answer, and returns the
// findings of the advisories found. Without a lookup (`patchwright run`)
// nothing is asked; a failed lookup is recorded and said in the body.
func (r *run) checkAdvisories(ctx context.Context, files []findings.File) ([]findings.Finding, error) {
	if r.job.Advisories == nil {
		return nil, nil
	}
	var out []findings.Finding
	for _, c := range findings.AdvisoryChecks(files) {
		list, rec := r.lookup(ctx, c.Query)
		rec.Path, rec.Range = c.Path, c.Range
		if _, err := r.ledger.Append(rec); err != nil {
			return nil, err
		}
		for _, a := range list {
			out = append(out, c.Finding(a))
		}
	}
	return out, nil
}

// lookup answers one query from the cache or the database, with the
// ledger record of the answer.
func (r *run) lookup(ctx context.Context, q findings.AdvisoryQuery) ([]findings.KnownAdvisory, *ledger.AdvisoryCheck) {
	rec := &ledger.AdvisoryCheck{Ecosystem: q.Ecosystem, Name: q.Name, Version: q.Version}
	list, cached := r.e.AdvisoryCache.get(q, r.e.now())
	if !cached {
		var err error
		if list, err = r.job.Advisories.Advisories(ctx, q); err != nil {
			rec.Error = scrubPaths(err, r.clone.tmp).Error()
			return nil, rec
		}
		r.e.AdvisoryCache.put(q, list, r.e.now())
	}
	rec.Cached = cached
	for _, a := range list {
		rec.Advisories = append(rec.Advisories, ledger.AdvisoryRecord{ID: a.ID, Severity: a.Severity, Summary: a.Summary, URL: a.URL})
	}
	return list, rec
}
