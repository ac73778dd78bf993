package runstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writeRun writes one file of run id under dir, modified at mtime.
func writeRun(t *testing.T, dir, id, name, content string, mtime time.Time) {
	t.Helper()
	d := filepath.Join(dir, id)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestMirrorCopiesChangedRunsWithinRetention(t *testing.T) {
	s, mr := newStore(t) // retention 48h
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.Clock = func() time.Time { return now }
	dir := t.TempDir()
	ctx := context.Background()
	writeRun(t, dir, "fresh", FileLedger, `{"seq":1}`+"\n", now.Add(-time.Minute))
	writeRun(t, dir, "expired", FileLedger, `{"seq":1}`+"\n", now.Add(-49*time.Hour))
	writeRun(t, dir, "bad id!", FileLedger, `{"seq":1}`+"\n", now)
	os.WriteFile(filepath.Join(dir, "stray-file"), []byte("x"), 0o644)

	m := &Mirror{Dir: dir, Store: s}
	m.Sync(ctx)
	if keys := mr.Keys(); len(keys) != 1 || keys[0] != KeyPrefix+"fresh" {
		t.Fatalf("keys after the first copy = %q, want only the fresh run", keys)
	}
	rec, err := s.Get(ctx, "fresh")
	if err != nil || rec.Done || string(rec.Ledger) != `{"seq":1}`+"\n" {
		t.Fatalf("fresh run = %+v, %v", rec, err)
	}

	// Unchanged files are not copied again.
	mr.Del(KeyPrefix + "fresh")
	m.Sync(ctx)
	if _, err := s.Get(ctx, "fresh"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unchanged run was copied again: %v", err)
	}

	// A newer file is: the run has ended.
	writeRun(t, dir, "fresh", FileResult, `{"outcome":"failed"}`, now)
	m.Sync(ctx)
	if rec, err := s.Get(ctx, "fresh"); err != nil || !rec.Done || string(rec.Result) != `{"outcome":"failed"}` {
		t.Fatalf("after the result = %+v, %v", rec, err)
	}

	// A restarted mirror has forgotten what it copied, and still leaves
	// the expired run alone.
	mr.FlushAll()
	(&Mirror{Dir: dir, Store: s}).Sync(ctx)
	if keys := mr.Keys(); len(keys) != 1 || keys[0] != KeyPrefix+"fresh" {
		t.Fatalf("keys after a restart = %q, want only the fresh run", keys)
	}
}

// TestMirrorRunCopiesUntilCancelled: Run copies at once, and returns
// once its context ends.
func TestMirrorRunCopiesUntilCancelled(t *testing.T) {
	s, mr := newStore(t)
	dir := t.TempDir()
	writeRun(t, dir, "r1", FileLedger, `{"seq":1}`+"\n", time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&Mirror{Dir: dir, Store: s, Interval: time.Millisecond}).Run(ctx)
	}()
	for !mr.Exists(KeyPrefix + "r1") {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}

func TestMirrorWithoutRunsDirectory(t *testing.T) {
	s, mr := newStore(t)
	(&Mirror{Dir: filepath.Join(t.TempDir(), "none"), Store: s}).Sync(context.Background())
	if keys := mr.Keys(); len(keys) != 0 {
		t.Fatalf("keys = %q", keys)
	}
}
