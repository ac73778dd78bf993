package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// The kill switch: an operator's pause, kept in Redis so that every worker
// and every `serve` sees it on the next read, with no restart. A pause
// covers everything, one installation, or one repository; the worker
// holds the agent jobs of a paused scope (they wait in the queue and start
// on resume) and interrupts running ones at their next step.
var (
	pausesKey = KeyPrefix + "pauses"
	// pauseAnsweredKey + scope is the set of issues already told, during
	// this pause of scope, that their job is held.
	pauseAnsweredKey = KeyPrefix + "pause-answered:"
)

// Scope is what a pause covers: everything (the zero Scope), one
// installation, or one repository (Repo is owner/name).
type Scope struct {
	Installation int64  `json:"installation,omitempty"`
	Repo         string `json:"repo,omitempty"`
}

// ParseScope checks a scope from the command line: an installation ID
// above 0 or an owner/name repository, not both.
func ParseScope(installation int64, repo string) (Scope, error) {
	switch {
	case installation < 0:
		return Scope{}, fmt.Errorf("installation %d: want an ID above 0", installation)
	case installation > 0 && repo != "":
		return Scope{}, errors.New("give an installation or a repository, not both")
	case repo != "":
		owner, name, ok := strings.Cut(repo, "/")
		if !ok || owner == "" || name == "" || strings.ContainsAny(name, "/ ") || strings.ContainsAny(owner, " ") {
			return Scope{}, fmt.Errorf("repository %q: want OWNER/NAME", repo)
		}
	}
	return Scope{Installation: installation, Repo: strings.ToLower(repo)}, nil
}

// key is the scope's field in the pauses hash.
func (s Scope) key() string {
	switch {
	case s.Repo != "":
		return "repo:" + strings.ToLower(s.Repo)
	case s.Installation > 0:
		return "installation:" + strconv.FormatInt(s.Installation, 10)
	}
	return "all"
}

// String names the scope for people.
func (s Scope) String() string {
	switch {
	case s.Repo != "":
		return "repository " + s.Repo
	case s.Installation > 0:
		return "installation " + strconv.FormatInt(s.Installation, 10)
	}
	return "every installation"
}

// scopesOf are the three scopes that can cover issue's job.
func scopesOf(issue tasks.Issue) []Scope {
	return []Scope{{}, {Installation: issue.InstallationID}, {Repo: strings.ToLower(issue.Owner + "/" + issue.Repo)}}
}

// Pause is one scope's pause: who set it and when.
type Pause struct {
	Scope Scope     `json:"scope"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
}

// Pause pauses scope on behalf of by. Pausing a paused scope keeps the
// first pause (and its answers): it changed nothing.
func (q *Queue) Pause(ctx context.Context, scope Scope, by string) (Pause, bool, error) {
	p := Pause{Scope: scope, By: by, At: time.Now().UTC().Truncate(time.Second)}
	raw, err := json.Marshal(p)
	if err != nil {
		return Pause{}, false, err
	}
	set, err := q.rdb.HSetNX(ctx, pausesKey, scope.key(), raw).Result()
	if err != nil {
		return Pause{}, false, fmt.Errorf("pause %s: %w", scope, err)
	}
	if !set {
		old, err := q.pauseOf(ctx, scope)
		return old, false, err
	}
	return p, true, nil
}

// Resume lifts scope's pause; false when it was not paused. Held jobs
// start on their next look (within seconds); running ones were already
// interrupted.
func (q *Queue) Resume(ctx context.Context, scope Scope) (bool, error) {
	pipe := q.rdb.TxPipeline()
	n := pipe.HDel(ctx, pausesKey, scope.key())
	pipe.Del(ctx, pauseAnsweredKey+scope.key())
	if _, err := pipe.Exec(ctx); err != nil {
		return false, fmt.Errorf("resume %s: %w", scope, err)
	}
	return n.Val() > 0, nil
}

// Pauses lists the pauses in force, everything first, then by scope.
func (q *Queue) Pauses(ctx context.Context) ([]Pause, error) {
	all, err := q.rdb.HGetAll(ctx, pausesKey).Result()
	if err != nil {
		return nil, fmt.Errorf("list pauses: %w", err)
	}
	out := make([]Pause, 0, len(all))
	for field, raw := range all {
		var p Pause
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			return nil, fmt.Errorf("pause %s in Redis: %w", field, err)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Scope.key() < out[j].Scope.key() })
	return out, nil
}

func (q *Queue) pauseOf(ctx context.Context, scope Scope) (Pause, error) {
	raw, err := q.rdb.HGet(ctx, pausesKey, scope.key()).Result()
	if err != nil {
		return Pause{}, fmt.Errorf("read pause of %s: %w", scope, err)
	}
	var p Pause
	return p, json.Unmarshal([]byte(raw), &p)
}

// PausedFor is the pause covering issue's jobs, if any: one round trip,
// read on every job start and every few seconds of a running job. The
// widest pause wins.
func (q *Queue) PausedFor(ctx context.Context, issue tasks.Issue) (Pause, bool, error) {
	scopes := scopesOf(issue)
	fields := make([]string, len(scopes))
	for i, s := range scopes {
		fields[i] = s.key()
	}
	vals, err := q.rdb.HMGet(ctx, pausesKey, fields...).Result()
	if err != nil {
		return Pause{}, false, fmt.Errorf("read pauses for %s: %w", issue, err)
	}
	for i, v := range vals {
		raw, ok := v.(string)
		if !ok {
			continue
		}
		var p Pause
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			return Pause{}, false, fmt.Errorf("pause %s in Redis: %w", fields[i], err)
		}
		return p, true, nil
	}
	return Pause{}, false, nil
}

// ClaimPauseAnswer reports whether issue is yet to be told that p holds
// its job: true once per issue and pause, so a job put back again and
// again while paused is answered once.
func (q *Queue) ClaimPauseAnswer(ctx context.Context, p Pause, issue tasks.Issue) (bool, error) {
	n, err := q.rdb.SAdd(ctx, pauseAnsweredKey+p.Scope.key(), issueKey(issue)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("claim the pause answer on %s: %w", issue, err)
	}
	return n == 1, nil
}

// UnclaimPauseAnswer undoes ClaimPauseAnswer when the answer could not be
// queued.
func (q *Queue) UnclaimPauseAnswer(ctx context.Context, p Pause, issue tasks.Issue) error {
	return q.rdb.SRem(ctx, pauseAnsweredKey+p.Scope.key(), issueKey(issue)).Err()
}
