package outcomes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// RunsKey is the Redis hash of what the runs of each agent pull request
// cost and which model they used, written when a run publishes
// (NoteRun) and read when the pull request is classified.
const RunsKey = "patchwright:outcomes:runs"

// Source reads an agent pull request from GitHub; *githubapi.App is one.
type Source interface {
	PullRequestState(ctx context.Context, pr tasks.Issue) (githubapi.PullState, error)
}

// Classifier classifies agent pull requests and stores the outcome.
type Classifier struct {
	GitHub Source
	Store  *Store
	// AppLogin is the app's bot login ("patchwright[bot]"): its commits
	// and reviews are not a human's.
	AppLogin string
}

// Classify reads pull request pr (Number is the pull request's) from
// GitHub, classifies it with the model and cost its runs noted, and
// stores the record, replacing any earlier one: any number of calls for
// one pull request, in any order, leave the record of its latest state.
func (c *Classifier) Classify(ctx context.Context, pr tasks.Issue) (Record, error) {
	st, err := c.GitHub.PullRequestState(ctx, pr)
	if err != nil {
		return Record{}, err
	}
	f := Facts{Installation: pr.InstallationID, Repo: pr.Owner + "/" + pr.Repo, PR: pr.Number,
		State: st.State, Merged: st.Merged, OpenedAt: st.CreatedAt, ClosedAt: st.ClosedAt,
		CommitAuthors: st.CommitAuthors, Reviewers: st.Reviewers}
	if f.Superseded, err = c.Store.superseded(ctx, pr, st.HeadRef); err != nil {
		return Record{}, err
	}
	rec, err := Classify(f, c.AppLogin)
	if err != nil {
		return Record{}, err
	}
	if rec.Model, rec.CostUSD, rec.CostKnown, err = c.Store.run(ctx, rec); err != nil {
		return Record{}, err
	}
	return rec, c.Store.Put(ctx, rec)
}

// Outcome is Classify for the worker, which needs only whether it
// worked; facts GitHub cannot have given are not worth a retry.
func (c *Classifier) Outcome(ctx context.Context, pr tasks.Issue) error {
	_, err := c.Classify(ctx, pr)
	if errors.Is(err, ErrBadFacts) {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	return err
}

// NoteRun adds one run's model and cost (nil: the model has no price) to
// those of pull request pr of issue (Number is the issue's): a retry's
// cost adds to the first run's, and a pull request any of whose runs had
// no price has no known cost. A new pull request for the issue
// supersedes the older one when that one was closed unmerged.
func (s *Store) NoteRun(ctx context.Context, issue tasks.Issue, pr int, model string, cost *float64) error {
	prIssue := issue
	prIssue.Number = pr
	f := fieldOf(prIssue)
	p := s.Redis.TxPipeline()
	s.written(ctx, p, "pr:"+f, "issue:"+fieldOf(issue))
	// The periodic check looks at it after a period, unless its close
	// is classified first.
	p.ZAddNX(ctx, PendingKey, redis.Z{Score: float64(s.Now().Add(DefaultCheckAfter).UnixMilli()), Member: f})
	p.HSet(ctx, RunsKey, f+":model", model)
	if cost == nil {
		p.HSet(ctx, RunsKey, f+":unpriced", "1")
	} else {
		p.HIncrByFloat(ctx, RunsKey, f+":cost", *cost)
	}
	if _, err := p.Exec(ctx); err != nil {
		return fmt.Errorf("note the run of %s: %w", prIssue, err)
	}
	return s.newest(ctx, issue, pr)
}

// run is what NoteRun noted for r's pull request; no run noted is an
// unknown model and cost.
func (s *Store) run(ctx context.Context, r Record) (model string, usd float64, known bool, err error) {
	f := r.field()
	vals, err := s.Redis.HMGet(ctx, RunsKey, f+":model", f+":cost", f+":unpriced").Result()
	if err != nil {
		return "", 0, false, fmt.Errorf("read the runs of %s#%d: %w", r.Repo, r.PR, err)
	}
	model, _ = vals[0].(string)
	costText, priced := vals[1].(string)
	if _, unpriced := vals[2].(string); unpriced || !priced {
		return model, 0, false, nil
	}
	usd, err = strconv.ParseFloat(strings.TrimSpace(costText), 64)
	if err != nil {
		return model, 0, false, nil
	}
	return model, usd, true, nil
}
