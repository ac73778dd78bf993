package webhook

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchClients is the number of concurrent clients: RunParallel starts
// parallelism × GOMAXPROCS goroutines.
const benchClients = 32

// BenchmarkWebhook drives signed issues.labeled deliveries (unique delivery
// IDs and issues, so every one is enqueued) through the real handler into
// real Redis, beside a baseline that only verifies the signature.
//
//	go test -run '^$' -bench BenchmarkWebhook -benchtime 5s ./webhook/
func BenchmarkWebhook(b *testing.B) {
	e := newEnv(b)
	e.h.cfg.Logger = discardLogger
	baseline := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		if verifySignature([]byte(testSecret), body, r.Header.Get("X-Hub-Signature-256"), "") != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	template := string(labeled(b, 999999999, writerLogin))
	var seq atomic.Int64
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"baseline", baseline}, {"handler", e.h}} {
		b.Run(bc.name, func(b *testing.B) {
			var mu sync.Mutex
			var lat []time.Duration
			b.SetParallelism(benchClients / max(1, runtimeProcs()))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					n := seq.Add(1)
					body := strings.Replace(template, "999999999", fmt.Sprint(n), 1)
					req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-GitHub-Event", "issues")
					req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", n))
					req.Header.Set("X-Hub-Signature-256", Signature([]byte(testSecret), []byte(body)))
					rec := httptest.NewRecorder()
					start := time.Now()
					bc.h.ServeHTTP(rec, req)
					mine = append(mine, time.Since(start))
					if rec.Code != http.StatusAccepted {
						b.Errorf("status %d: %s", rec.Code, rec.Body)
						return
					}
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
