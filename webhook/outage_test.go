package webhook

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// ownRedis starts a redis-server from PATH on a free port and returns its
// address and a function that stops it.
func ownRedis(t *testing.T, port int) (stop func()) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not on PATH: apt-get install redis-server (bash .ci/run does)")
	}
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	defer rdb.Close()
	for range 500 {
		if rdb.Ping(context.Background()).Err() == nil {
			break
		}
		exec.Command("sleep", "0.01").Run()
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	return stop
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestRedisDownThenBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server from PATH")
	}
	port := freePort(t)
	stop := ownRedis(t, port)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	defer rdb.Close()
	e := newEnvOn(t, rdb)
	stop()
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusServiceUnavailable)
	ownRedis(t, port)
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusAccepted)
	if n := len(e.tasks(tasks.QueueAgent)); n != 1 {
		t.Fatalf("%d agent tasks, want 1", n)
	}
}

// TestFailedEnqueueLeavesNoLock makes only asynq's writes fail (a Redis ACL
// user that may touch patchwright:* keys but not asynq's), so the lock is
// taken and the enqueue after it fails: the lock must be released.
func TestFailedEnqueueLeavesNoLock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server from PATH")
	}
	port := freePort(t)
	ownRedis(t, port)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "limited", "on", ">pw", "~patchwright:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	limited := redis.NewClient(&redis.Options{Addr: addr, Username: "limited", Password: "pw"})
	defer limited.Close()
	e := newEnvOn(t, limited)
	expectStatus(t, e.deliver("issues", "d-1", labeled(t, 7, writerLogin)), http.StatusServiceUnavailable)
	keys, err := admin.Keys(ctx, "patchwright:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Fatalf("keys left behind after a failed enqueue: %v", keys)
	}

	// An earlier job's worked record survives a failed enqueue unchanged.
	worked := jobs.KeyPrefix + "worked:codertocat/hello-world#7"
	if err := admin.Set(ctx, worked, "earlier-task", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, e.deliver("issues", "d-2", labeled(t, 7, writerLogin)), http.StatusServiceUnavailable)
	if v, err := admin.Get(ctx, worked).Result(); err != nil || v != "earlier-task" {
		t.Fatalf("worked record after a failed enqueue: %q, %v; want earlier-task", v, err)
	}
	if keys, _ := admin.Keys(ctx, "patchwright:*").Result(); len(keys) != 1 {
		t.Fatalf("keys after a failed enqueue: %v; want only the worked record", keys)
	}
}
