package runstore

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
)

// DefaultMirrorInterval is how often Mirror.Run copies changed runs, so a
// run page shows a run while it goes on.
const DefaultMirrorInterval = 5 * time.Second

// Mirror copies the run directories under Dir (DATA_DIR/runs/<id>/) into
// Store whenever one of a run's files changed since its last copy. It reads
// only the data directory, so the pipeline that writes the runs needs no
// knowledge of Redis. Its retention rule: a run whose files are all older
// than the Store's TTL is never copied, so a restarted worker (which has
// forgotten what it copied) does not bring expired runs back.
type Mirror struct {
	// Dir holds one directory per run. Required.
	Dir string
	// Store receives the records. Required.
	Store *Store
	// Interval between copies; default DefaultMirrorInterval.
	Interval time.Duration
	// Logger receives failed copies; nil discards them.
	Logger *slog.Logger

	mu   sync.Mutex           // one Sync at a time: Run's and the last one
	seen map[string]time.Time // run ID → newest file time already stored
}

// Run copies changed runs every Interval until ctx ends. The owner makes
// the last copy with Sync once the runs it waits for have ended.
func (m *Mirror) Run(ctx context.Context) {
	interval := m.Interval
	if interval <= 0 {
		interval = DefaultMirrorInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		m.Sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync stores every run whose files are newer than what was stored, and
// not past the retention.
func (m *Mirror) Sync(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]time.Time{}
	}
	entries, err := os.ReadDir(m.Dir)
	if err != nil {
		return // no run yet
	}
	now := m.Store.Now()
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() || !ValidID(id) {
			continue
		}
		dir := filepath.Join(m.Dir, id)
		newest := newestFile(dir)
		if newest.IsZero() || !newest.After(m.seen[id]) || now.Sub(newest) > m.Store.TTL() {
			continue
		}
		rec, err := FromDir(dir, id)
		if err == nil {
			_, err = m.Store.Put(ctx, rec)
		}
		if err != nil {
			if m.Logger != nil {
				m.Logger.Warn("copy run to the run store", "run", id, logkey.Err, err)
			}
			continue
		}
		m.seen[id] = newest
	}
}

// newestFile is the latest modification time of a run's files.
func newestFile(dir string) time.Time {
	var newest time.Time
	for _, name := range runFiles {
		if info, err := os.Stat(filepath.Join(dir, name)); err == nil && info.ModTime().After(newest) {
			newest = info.ModTime()
		}
	}
	return newest
}
