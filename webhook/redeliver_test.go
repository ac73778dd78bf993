package webhook

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
)

func TestRedeliverFailedDeliveries(t *testing.T) {
	e := newEnv(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(min int) string { return now.Add(-time.Duration(min) * time.Minute).Format(time.RFC3339) }
	// "lost" was enqueued, but GitHub saw a timeout (status 0): redelivered,
	// it must not make a second job.
	lost := labeled(t, 7, writerLogin)
	expectStatus(t, e.deliver("issues", "lost", lost), http.StatusAccepted)
	e.gh.deliveries = []map[string]any{
		{"id": 9, "guid": "failed-then-ok", "delivered_at": at(1), "redelivery": true, "status_code": 202},
		{"id": 8, "guid": "lost", "delivered_at": at(2), "status_code": 0},
		{"id": 7, "guid": "failed-then-ok", "delivered_at": at(3), "status_code": 503},
		{"id": 6, "guid": "ok", "delivered_at": at(4), "status_code": 202},
		{"id": 5, "guid": "bad", "delivered_at": at(5), "status_code": 401},
		{"id": 4, "guid": "down", "delivered_at": at(6), "status_code": 503},
		{"id": 3, "guid": "ancient", "delivered_at": at(60 * 48), "status_code": 503},
	}
	e.gh.onRedeliver = func(id int64) {
		if id == 8 {
			expectStatus(t, e.deliver("issues", "lost", lost), http.StatusOK)
		}
	}
	r := &Redeliverer{Source: e.app, Now: func() time.Time { return now }, Logger: testLogger(t)}
	n, err := r.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || !slices.Equal(e.gh.redelivered, []int64{8, 4}) {
		t.Fatalf("redelivered %v (%d), want [8 4]", e.gh.redelivered, n)
	}
	if got := len(e.tasks(tasks.QueueAgent)); got != 1 {
		t.Fatalf("%d agent tasks after redelivery, want 1", got)
	}
	// Each GUID is retried at most MaxRedeliveries times.
	for range MaxRedeliveries + 1 {
		if _, err := r.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(e.gh.redelivered) != 2*MaxRedeliveries {
		t.Fatalf("%d redeliveries, want %d", len(e.gh.redelivered), 2*MaxRedeliveries)
	}
}
