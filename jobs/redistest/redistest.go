// Package redistest gives tests a client on the test Redis server, which
// .ci/run starts and names in PATCHWRIGHT_TEST_REDIS_ADDR.
package redistest

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Client returns a client on database db of the test server, flushed, and
// closed when the test ends. Each package uses its own db because packages'
// tests run in parallel. Under -short the test is skipped; without the
// server's address it fails, saying how to start one.
func Client(t testing.TB, db int) *redis.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis: start redis-server and set PATCHWRIGHT_TEST_REDIS_ADDR (bash .ci/run does both)")
	}
	addr := os.Getenv("PATCHWRIGHT_TEST_REDIS_ADDR")
	if addr == "" {
		t.Fatal("PATCHWRIGHT_TEST_REDIS_ADDR is not set: start redis-server and export its host:port (bash .ci/run does both), or use -short")
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("flush redis %s db %d: %v", addr, db, err)
	}
	return rdb
}
