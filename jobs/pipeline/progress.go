package pipeline

import (
	"github.com/patchwright/patchwright/agent/ledger"
)

// openLedger creates the run's ledger file, its first events the images
// prepare resolved. Each event the ledger records
// also updates the progress (step, last tool, tokens), so what a person
// watches is read from the same record as the report.
func (r *run) openLedger(path string) error {
	lw, err := ledger.Create(path, ledger.Options{Now: r.e.Now, Observe: r.observe})
	if err != nil {
		return err
	}
	r.ledger = lw
	r.recordImages()
	return nil
}

func (r *run) closeLedger() {
	if r.ledger != nil {
		r.ledger.Close()
	}
}

// observe updates the progress from one ledger event.
func (r *run) observe(p ledger.Payload) {
	r.mu.Lock()
	switch e := p.(type) {
	case *ledger.ModelTurn:
		r.progress.Step = e.Step
		r.progress.InputTokens += e.InputTokens
		r.progress.OutputTokens += e.OutputTokens
	case *ledger.ToolCall:
		r.progress.Step = e.Step
		r.progress.Tool = e.Tool
	default:
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.report()
}

// phase starts a phase and reports it.
func (r *run) phase(name Phase) {
	r.mu.Lock()
	r.progress.Phase = name
	r.clock.startLocked(name, r.e.now())
	r.mu.Unlock()
	r.report()
}

func (r *run) report() {
	if r.job.Progress == nil {
		return
	}
	r.mu.Lock()
	p := r.progress
	r.mu.Unlock()
	p.Elapsed = r.e.now().Sub(r.start)
	r.job.Progress(p)
}
