package runstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func newStore(t *testing.T) (*Store, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return &Store{Redis: rdb, Keep: Keep{Retention: 48 * time.Hour}}, mr
}

func TestPutGet(t *testing.T) {
	s, mr := newStore(t)
	ctx := context.Background()
	r := Record{ID: "run-1", Repo: "o/r", Issue: 7, Ledger: []byte(`{"seq":1}` + "\n"), Body: []byte("## Summary\n")}
	if _, err := s.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Repo != "o/r" || got.Issue != 7 || !bytes.Equal(got.Ledger, r.Ledger) || !bytes.Equal(got.Body, r.Body) || got.Done || got.UpdatedAt.IsZero() {
		t.Fatalf("Get = %+v", got)
	}
	if ttl := mr.TTL(KeyPrefix + "run-1"); ttl != 48*time.Hour {
		t.Fatalf("TTL %v, want the retention", ttl)
	}
	mr.FastForward(49 * time.Hour)
	if _, err := s.Get(ctx, "run-1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the retention: %v, want ErrNotFound", err)
	}
}

func TestDefaultRetention(t *testing.T) {
	s, mr := newStore(t)
	s.Retention = 0
	if _, err := s.Put(context.Background(), Record{ID: "r"}); err != nil {
		t.Fatal(err)
	}
	if ttl := mr.TTL(KeyPrefix + "r"); ttl != DefaultRetention {
		t.Fatalf("TTL %v, want %v", ttl, DefaultRetention)
	}
}

func TestBadIDsNeverReachRedis(t *testing.T) {
	s, mr := newStore(t)
	for _, id := range []string{"", "..", "a/b", "a b", "x\n", strings.Repeat("a", 129), "*"} {
		if _, err := s.Put(context.Background(), Record{ID: id}); err == nil {
			t.Errorf("Put(%q) accepted", id)
		}
		if _, err := s.Get(context.Background(), id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q) = %v", id, err)
		}
	}
	if keys := mr.Keys(); len(keys) != 0 {
		t.Fatalf("keys written: %q", keys)
	}
}

func TestCorruptValue(t *testing.T) {
	s, mr := newStore(t)
	mr.Set(KeyPrefix+"bad", "not gzip")
	if _, err := s.Get(context.Background(), "bad"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("corrupt value: %v", err)
	}
}

func TestFromDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileLedger), []byte("l\n"), 0o644)
	r, err := FromDir(dir, "x")
	if err != nil || r.Done || string(r.Ledger) != "l\n" || r.Result != nil {
		t.Fatalf("running: %+v, %v", r, err)
	}
	os.WriteFile(filepath.Join(dir, FileResult), []byte(`{"outcome":"verified"}`), 0o644)
	os.WriteFile(filepath.Join(dir, FileBody), []byte("body"), 0o644)
	if r, err = FromDir(dir, "x"); err != nil || !r.Done || string(r.Body) != "body" {
		t.Fatalf("done: %+v, %v", r, err)
	}
}

// typicalLedger is a run of 30 model turns, each with a tool call and a
// command of a few kilobytes of output: the size of the runs the e2e tests
// and `patchwright run` on docs/examples produce, scaled up.
func typicalLedger() []byte {
	var b bytes.Buffer
	out := strings.Repeat("ok  \tgithub.com/acme/pkg\t0.012s\n", 60)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, `{"seq":%d,"time":"2026-12-01T12:00:00Z","type":"model_turn","step":%d,"model":"openai:gpt-4.1","input_tokens":%d,"output_tokens":300,"text":"I will look at the parser next and run the tests.","tool_calls":[{"id":"c%d","name":"run","arguments":"{\"command\":\"go test ./...\"}"}]}`+"\n", 3*i-2, i, 20000+i*900, i)
		fmt.Fprintf(&b, `{"seq":%d,"time":"2026-12-01T12:00:01Z","type":"tool_call","step":%d,"call_id":"c%d","tool":"run","arguments":"{\"command\":\"go test ./...\"}","result":%q,"result_bytes":%d,"duration_ns":2500000000}`+"\n", 3*i-1, i, i, out, len(out))
		fmt.Fprintf(&b, `{"seq":%d,"time":"2026-12-01T12:00:02Z","type":"command","step":%d,"call_id":"c%d","tool":"run","command":"go test ./...","exit_code":0,"duration_ns":2500000000,"output":%q,"output_bytes":%d}`+"\n", 3*i, i, i, out, len(out))
	}
	return b.Bytes()
}

// TestTypicalRecordSize measures what a typical run costs in Redis; the
// figure is logged (go test -v) and bounded so a regression in
// compression shows.
func TestTypicalRecordSize(t *testing.T) {
	s, mr := newStore(t)
	ledger := typicalLedger()
	body := bytes.Repeat([]byte("| test | go test ./... | passed | passed | 2.5 s |\n"), 40)
	n, err := s.Put(context.Background(), Record{ID: "typical", Ledger: ledger, Result: []byte(`{"outcome":"verified"}`), Body: body, Done: true})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := mr.Get(KeyPrefix + "typical")
	if len(stored) != n {
		t.Fatalf("Put said %d bytes, Redis holds %d", n, len(stored))
	}
	raw := len(ledger) + len(body)
	t.Logf("typical run: %d bytes of ledger and body, %d bytes in Redis (%.1f%%)", raw, n, 100*float64(n)/float64(raw))
	if n*4 > raw {
		t.Fatalf("compressed to %d of %d bytes: less than 4x", n, raw)
	}
}
