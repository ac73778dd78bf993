package eval

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints one line per finished run: tasks done, resolved so far,
// cost so far and an estimate of the time left.
type progress struct {
	mu        sync.Mutex
	w         io.Writer
	now       func() time.Time
	start     time.Time
	total     int // runs
	tasks     int
	runs      int // runs per task
	left      map[string]int
	done      int
	tasksDone int
	resolved  int
	cost      float64
	costKnown bool
}

func newProgress(o Options, valid []*prepared) *progress {
	p := &progress{
		w: o.Progress, now: o.Now, start: o.Now(), total: len(valid) * o.Runs,
		tasks: len(valid), runs: o.Runs, left: map[string]int{}, costKnown: true,
	}
	for _, v := range valid {
		p.left[v.task.ID] = o.Runs
	}
	return p
}

func (p *progress) finish(task string, r Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if p.left[task]--; p.left[task] == 0 {
		p.tasksDone++
	}
	if r.Resolved {
		p.resolved++
	}
	if r.CostUSD == nil {
		p.costKnown = false
	} else {
		p.cost += *r.CostUSD
	}
	if p.w != nil {
		fmt.Fprintln(p.w, p.line())
	}
}

// line is the progress line; the time left assumes the remaining runs
// take as long as the finished ones did on average.
func (p *progress) line() string {
	cost := "cost unknown"
	if p.costKnown {
		cost = fmt.Sprintf("$%.4f", p.cost)
	}
	elapsed := p.now().Sub(p.start)
	left := time.Duration(0)
	if p.done > 0 {
		left = elapsed / time.Duration(p.done) * time.Duration(p.total-p.done)
	}
	return fmt.Sprintf("eval: %d/%d tasks done · run %d/%d · %d resolved · %s · about %s left",
		p.tasksDone, p.tasks, p.done, p.total, p.resolved, cost, left.Round(time.Second))
}
