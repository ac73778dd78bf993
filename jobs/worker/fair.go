package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/interrupt"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// ErrWaiting is the error of an agent job that found its installation or
// repository at its concurrency limit. asynq puts it back for later
// without counting a failure (NewServer's IsFailure), behind the jobs of
// others: that is what keeps one busy installation from filling the pool.
var ErrWaiting = errors.New("waiting for a slot")

// Default shares of the pool (the concurrency of every worker serving the
// agent queue together) when Fairness gives no fixed limit: one
// installation takes at most half of it, one repository a quarter, each at
// least one job.
const (
	DefaultInstallationShare = 2 // pool / 2
	DefaultRepoShare         = 4 // pool / 4
)

// poolTTL is how long a worker trusts its count of the pool.
const poolTTL = 30 * time.Second

// Fairness gives the concurrency limits of agent jobs, shared by all
// workers through Redis (jobs.Queue.TakeSlot).
type Fairness struct {
	// Installation and Repo are fixed limits; 0 takes the default share
	// of the pool, less than 0 is no limit.
	Installation, Repo int
	// Inspector counts the pool; required when a limit is 0.
	Inspector *asynq.Inspector

	mu   sync.Mutex
	pool int
	at   time.Time
}

// Limits returns the limits now.
func (f *Fairness) Limits() jobs.Limits {
	l := jobs.Limits{Installation: f.Installation, Repo: f.Repo}
	if l.Installation == 0 || l.Repo == 0 {
		pool := f.poolSize()
		if l.Installation == 0 {
			l.Installation = max(1, pool/DefaultInstallationShare)
		}
		if l.Repo == 0 {
			l.Repo = max(1, pool/DefaultRepoShare)
		}
	}
	return l
}

// poolSize sums the concurrency of the servers serving the agent queue, as
// their heartbeats in Redis say; 0 (so limits of 1) when it cannot tell.
func (f *Fairness) poolSize() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if time.Since(f.at) < poolTTL {
		return f.pool
	}
	servers, err := f.Inspector.Servers()
	if err != nil {
		return f.pool
	}
	n := 0
	for _, s := range servers {
		if _, ok := s.Queues[tasks.QueueAgent]; ok {
			n += s.Concurrency
		}
	}
	f.pool, f.at = n, time.Now()
	return n
}

// waitPoll is how often a job on its last try looks for a free slot.
const waitPoll = time.Second

// takeSlot takes the job's slot. A full slot sends the job back
// (ErrWaiting) unless this is its last try: asynq archives a task whose
// retries are used up whatever the error, so the last try waits here for
// a slot instead, holding its worker.
// The slot is renewed until release is called, so that it lapses soon
// (jobs.SlotTTL) after its worker dies.
func (h *Handlers) takeSlot(ctx context.Context, issue tasks.Issue, run tasks.Attempt) (release func(), err error) {
	if h.Fairness == nil {
		return func() {}, nil
	}
	if err := h.waitSlot(ctx, issue, run); err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(jobs.SlotRenew):
			}
			// Renewing a slot it holds never finds it full.
			if _, err := h.Queue.TakeSlot(ctx, issue, run.TaskID, jobs.Limits{}); err != nil {
				h.Logger.Warn("could not renew the job's slot", logkey.Task, run.TaskID, logkey.Err, err)
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		h.releaseSlot(ctx, issue, run.TaskID)
	}, nil
}

func (h *Handlers) waitSlot(ctx context.Context, issue tasks.Issue, run tasks.Attempt) error {
	for {
		full, err := h.Queue.TakeSlot(ctx, issue, run.TaskID, h.Fairness.Limits())
		if err != nil || full == "" {
			return err
		}
		if !run.Last() {
			return fmt.Errorf("%w: %s is at its limit", ErrWaiting, full)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(waitPoll):
		}
	}
}

func (h *Handlers) releaseSlot(ctx context.Context, issue tasks.Issue, taskID string) {
	rctx, cancel := interrupt.After(ctx)
	defer cancel()
	if err := h.Queue.ReleaseSlot(rctx, issue, taskID); err != nil {
		h.Logger.Warn("slot kept until it expires", logkey.Task, taskID, logkey.Err, err)
	}
}

// retryDelay puts a waiting job back soon, with jitter so that waiting
// jobs do not come back together, and a drained or recovered job at once;
// other errors get asynq's backoff.
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	switch {
	case errors.Is(err, ErrWaiting):
		return waitDelay + rand.N(waitDelay)
	case errors.Is(err, ErrPaused):
		return pausedDelay + rand.N(waitDelay)
	case errors.Is(err, ErrDrained), errors.Is(err, asynq.ErrLeaseExpired):
		// Handed back, or taken back from a dead worker (whose lease took
		// 30 s or more to expire): the job did not fail, and it holds its
		// slot until it runs again.
		return 0
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}

// waitDelay: see retryDelay.
const waitDelay = 500 * time.Millisecond

// isFailure: a job waiting for a slot, held by a pause, or handed back by
// a drain, has not failed.
func isFailure(err error) bool {
	return !errors.Is(err, ErrWaiting) && !errors.Is(err, ErrPaused) && !errors.Is(err, ErrDrained)
}
