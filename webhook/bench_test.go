package webhook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// benchClients is the number of concurrent clients: RunParallel starts
// parallelism × GOMAXPROCS goroutines.
const benchClients = 32

// BenchmarkWebhook drives signed issues.labeled deliveries (unique delivery
// IDs and issues, so every one is enqueued) through the real handler into
// real Redis, beside a baseline that only verifies the signature. "http"
// sends them as GitHub does, over HTTP on loopback with keep-alive
// connections; "direct" calls ServeHTTP in process, which leaves out the
// HTTP cost both handlers share and so shows their difference at its
// largest.
//
//	go test -run '^$' -bench BenchmarkWebhook -benchtime 5s ./webhook/
func BenchmarkWebhook(b *testing.B) {
	e := newEnv(b)
	e.h.cfg.Logger = discardLogger
	// As many bodies may be read at once as there are clients: the bound
	// (DefaultMaxBodies) sheds load the baseline has no bound for, and a
	// 503 would end the benchmark (bodies_test.go tests the bound).
	e.h.limit = newBodyLimit(benchClients, DefaultMaxBodyBytes)
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
	// The template carries two placeholders, the issue number and its
	// updated_at, so each delivery is its own event (replay.go) for the
	// price of two string replacements; building it by decoding and
	// encoding the JSON (occurrence) cost the client several times what
	// the baseline does, on the same two cores, and hid the difference.
	template := string(fixturePayload(b, "issues.labeled.json", func(m map[string]any) {
		obj(m, "label")["name"] = "agent"
		obj(m, "issue")["number"] = 999999999
		obj(m, "issue")["updated_at"] = "UPDATED_AT"
		obj(m, "sender")["login"] = writerLogin
	}))
	var seq atomic.Int64
	next := func() (body, id string) {
		n := seq.Add(1)
		id = "bench-" + strconv.FormatInt(n, 10)
		at := time.Unix(1700000000+n, 0).UTC().Format(time.RFC3339)
		body = strings.Replace(template, "999999999", strconv.FormatInt(n, 10), 1)
		return strings.Replace(body, "UPDATED_AT", at, 1), id
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"baseline", baseline}, {"handler", e.h}} {
		b.Run("direct/"+bc.name, func(b *testing.B) {
			flushFor(b, e.rdb, bc.name)
			measure(b, e.rdb, func() (time.Duration, int, error) {
				body, id := next()
				req := signedRequest(httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(body)), body, id)
				rec := httptest.NewRecorder()
				start := time.Now()
				bc.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusAccepted {
					return time.Since(start), rec.Code, fmt.Errorf("%s", strings.TrimSpace(rec.Body.String()))
				}
				return time.Since(start), rec.Code, nil
			})
		})
		b.Run("http/"+bc.name, func(b *testing.B) {
			srv := httptest.NewServer(bc.h)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}}
			defer client.CloseIdleConnections()
			flushFor(b, e.rdb, bc.name)
			measure(b, e.rdb, func() (time.Duration, int, error) {
				body, id := next()
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/webhook", strings.NewReader(body))
				if err != nil {
					return 0, 0, err
				}
				req = signedRequest(req, body, id)
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					return 0, 0, err
				}
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				if resp.StatusCode != http.StatusAccepted {
					return took, resp.StatusCode, fmt.Errorf("%s", strings.TrimSpace(string(msg)))
				}
				return took, resp.StatusCode, nil
			})
		})
	}
}

// flushFor empties the handler's Redis database before each of its runs,
// so every run starts from the same keyspace: each delivery leaves four
// keys, and a keyspace grown by the runs before costs Redis more (its
// tables rehash as they grow), which made later runs look slower.
func flushFor(b *testing.B, rdb *redis.Client, name string) {
	if name != "handler" {
		return
	}
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// signedRequest adds GitHub's headers to a request carrying body.
func signedRequest(req *http.Request, body, id string) *http.Request {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", Signature([]byte(testSecret), []byte(body)))
	return req
}

// measure runs send from benchClients goroutines, failing on any status
// but 202, and reports the 99th percentile of the latencies send returns
// (request building and signing left out). It also reports the CPU time a
// delivery took, of this process (client and server) and of Redis (its
// INFO; other clients of the same server count too): on a machine shared
// with other work, wall-clock throughput moves with their load, and CPU
// time much less.
func measure(b *testing.B, rdb *redis.Client, send func() (time.Duration, int, error)) {
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(benchClients / max(1, runtimeProcs()))
	cpu0, redis0 := processCPU(), redisCPU(rdb)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			took, code, err := send()
			mine = append(mine, took)
			if err != nil || code != http.StatusAccepted {
				b.Errorf("status %d, %v", code, err)
				return
			}
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64((redisCPU(rdb)-redis0).Microseconds())/float64(b.N), "redis-cpu-µs/op")
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// processCPU is the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is the user and system time the Redis server has used.
func redisCPU(rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		return 0
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}
