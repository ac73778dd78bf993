package jobs

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/patchwright/patchwright/agent/ledger"
)

// openLedger creates the run's ledger file. Each line the ledger writes
// also updates the progress (step, last tool, tokens), so what a person
// watches is read from the same record as the report.
func (r *run) openLedger(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create ledger: %w", err)
	}
	r.ledgerOut = f
	r.ledger = ledger.New(&observedFile{f: f, on: r.observe}, ledger.Options{Now: r.e.Now})
	return nil
}

func (r *run) closeLedger() {
	if r.ledgerOut != nil {
		r.ledgerOut.Close()
	}
}

// observedFile passes ledger lines to a file and to an observer. It keeps
// the file's Sync, so the ledger still syncs every event.
type observedFile struct {
	f  *os.File
	on func([]byte)
}

func (o *observedFile) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err == nil {
		o.on(p)
	}
	return n, err
}

func (o *observedFile) Sync() error { return o.f.Sync() }

// observe updates the progress from one ledger line.
func (r *run) observe(line []byte) {
	var ev struct {
		Type         string `json:"type"`
		Step         int    `json:"step"`
		Tool         string `json:"tool"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	r.mu.Lock()
	switch ev.Type {
	case ledger.TypeModelTurn:
		r.progress.Step = ev.Step
		r.progress.InputTokens += ev.InputTokens
		r.progress.OutputTokens += ev.OutputTokens
	case ledger.TypeToolCall:
		r.progress.Step = ev.Step
		r.progress.Tool = ev.Tool
	default:
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.report()
}

// phase starts a phase and reports it.
func (r *run) phase(name string) {
	r.mu.Lock()
	r.progress.Phase = name
	r.mu.Unlock()
	r.report()
}

func (r *run) report() {
	if r.e.Progress == nil {
		return
	}
	r.mu.Lock()
	p := r.progress
	r.mu.Unlock()
	p.Elapsed = r.e.now().Sub(r.start)
	r.e.Progress(p)
}
