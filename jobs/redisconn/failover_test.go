package redisconn_test

import (
	"bytes"
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/redisconn"
	"github.com/patchwright/patchwright/jobs/redistest"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// TestClusterFailover crashes (SIGKILL) the master that holds the queue's
// hash slot in a Redis Cluster of three masters with a replica each, on
// loopback, and shows the queue going on through the same cluster client
// once the replica has taken over: what was stored before (the issue's
// lock, its fairness slot, its run record, its pending task) is there, and
// the enqueue and lock scripts, the run records and asynq's own server
// work on the new master. Then the old master comes back on its port,
// with its append-only file of before the crash: it rejoins as a replica,
// and the queue goes on with nothing of its stale copy (the job run
// after the failover is not run again, its released lock not back) and
// nothing stored since lost.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	nodes := redistest.StartClusterReplicas(t, 3, 1, "--appendonly", "yes")
	seeds := make([]string, len(nodes))
	for i, n := range nodes {
		seeds[i] = n.Addr()
	}
	c, err := redisconn.Open("redis-cluster://"+strings.Join(seeds, ","), redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cc := c.(*redis.ClusterClient)
	// Without a reload of its own the client would not see the new master
	// for a minute (ClusterReload).
	if got := cc.Options().ClusterStateReloadInterval; got != redisconn.ClusterReload {
		t.Fatalf("the cluster client rereads the slots every %v, want %v", got, redisconn.ClusterReload)
	}
	ctx := t.Context()

	q := jobs.NewQueue(c)
	issue := tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 1}
	enqueue := func(p tasks.SolveIssue, want jobs.EnqueueOutcome) {
		t.Helper()
		if res, err := q.EnqueueSolve(ctx, p); err != nil || res.Outcome != want {
			t.Fatalf("enqueue %s: %+v %v, want %v", p.DeliveryID, res, err, want)
		}
	}
	enqueue(tasks.SolveIssue{Issue: issue, DeliveryID: "d-1", Requester: "o"}, jobs.Enqueued)
	if full, err := q.TakeSlot(ctx, issue, "d-1", jobs.Limits{Installation: 1, Repo: 1}); err != nil || full != "" {
		t.Fatalf("slot: %q %v", full, err)
	}
	if how, err := q.StartRun(ctx, "d-1"); err != nil || how != tasks.RerunNone {
		t.Fatalf("first run: %q %v", how, err)
	}

	// The master of the queue's slot and its replica, as the cluster says.
	// The node the client asks may learn of the replica by gossip a little
	// after the node the cluster's start waited on did.
	var master, replica string
	waitUntil(t, "the slot's master and replica are online", func() bool {
		master, replica = slotNodes(t, cc, "asynq:{"+tasks.QueueAgent+"}:pending")
		return master != "" && replica != ""
	})
	var masterProc *redistest.Process
	for _, n := range nodes {
		if n.Addr() == master {
			masterProc = n
		}
	}
	if masterProc == nil || replica == "" {
		t.Fatalf("the slot's master %s is none of ours, or it has no replica (%q)", master, replica)
	}
	// Replication is asynchronous: crash the master only once its replica
	// has everything, so that the test shows failover, not a lost write.
	offset := infoInt(t, master, "master_repl_offset")
	waitUntil(t, "the replica has caught up", func() bool { return infoInt(t, replica, "slave_repl_offset") >= offset })

	masterProc.Kill()
	waitUntil(t, "the replica is promoted and the cluster ok", func() bool {
		return infoField(t, replica, "replication", "role") == "master" &&
			strings.Contains(clusterInfo(t, replica), "cluster_state:ok")
	})
	// The client learns the new master on its own (a failed node, or its
	// periodic reload of the slots); until then a command fails, as the
	// webhook's answer would (503, and GitHub delivers again).
	promoted := time.Now()
	var holder string
	waitUntil(t, "the cluster client reaches the new master", func() bool {
		holder, err = q.Active(ctx, issue)
		return err == nil
	})
	t.Logf("the cluster client answered %v after the promotion", time.Since(promoted).Round(time.Millisecond))
	if got, _ := slotNodes(t, cc, "asynq:{"+tasks.QueueAgent+"}:pending"); got != replica {
		t.Fatalf("the slot's master is %s after the failover, want the replica %s", got, replica)
	}

	// What was there before the crash.
	if holder != "d-1" {
		t.Fatalf("lock after the failover: %q, want d-1", holder)
	}
	if full, err := q.TakeSlot(ctx, tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}, "d-9", jobs.Limits{Installation: 1}); err != nil || full == "" {
		t.Fatalf("a second slot of installation 1 after the failover: %q %v, want it full", full, err)
	}
	if how, err := q.StartRun(ctx, "d-1"); err != nil || how != tasks.RerunCrashed {
		t.Fatalf("run record after the failover: %q %v, want %q", how, err, tasks.RerunCrashed)
	}

	// And the queue goes on: scripts, run records, asynq's server.
	if err := q.EndRun(ctx, "d-1", tasks.RerunDrained); err != nil {
		t.Fatal(err)
	}
	if how, err := q.StartRun(ctx, "d-1"); err != nil || how != tasks.RerunDrained {
		t.Fatalf("run record: %q %v, want %q", how, err, tasks.RerunDrained)
	}
	enqueue(tasks.SolveIssue{Issue: issue, DeliveryID: "d-2", Requester: "o"}, jobs.Busy)
	other := tasks.Issue{InstallationID: 2, Owner: "p", Repo: "s", Number: 7}
	enqueue(tasks.SolveIssue{Issue: other, DeliveryID: "d-5", Requester: "p"}, jobs.Enqueued)
	if full, err := q.TakeSlot(ctx, other, "d-5", jobs.Limits{Installation: 1, Repo: 1}); err != nil || full != "" {
		t.Fatalf("slot of installation 2: %q %v", full, err)
	}
	seen := runTasks(t, c, 2)
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"d-1", "d-5"}) {
		t.Fatalf("asynq ran %v after the failover, want d-1 and d-5", seen)
	}
	if err := q.Release(ctx, issue, "d-1"); err != nil {
		t.Fatal(err)
	}
	if holder, err := q.Active(ctx, issue); err != nil || holder != "" {
		t.Fatalf("lock after release: %q %v", holder, err)
	}

	// A job enqueued on the new master, then the old master's return: it
	// must follow the new master (whose data replaces its own), not take
	// the slot back with d-1 pending and locked as it was at the crash.
	third := tasks.Issue{InstallationID: 3, Owner: "q", Repo: "u", Number: 3}
	enqueue(tasks.SolveIssue{Issue: third, DeliveryID: "d-6", Requester: "q"}, jobs.Enqueued)
	// What the test rests on: the old master's append-only file holds
	// d-1's task, which it would bring back were it master again.
	if !fileHolds(t, masterProc.Dir, "asynq:{"+tasks.QueueAgent+"}:t:d-1") {
		t.Fatal("the old master's append-only file does not hold d-1: its return would show nothing")
	}
	masterProc.Restart()
	_, replicaPort, _ := net.SplitHostPort(replica)
	waitUntil(t, "the old master rejoins as the new master's replica, in sync", func() bool {
		return infoField(t, master, "replication", "role") == "slave" &&
			infoField(t, master, "replication", "master_port") == replicaPort &&
			infoField(t, master, "replication", "master_link_status") == "up"
	})
	if got, _ := slotNodes(t, cc, "asynq:{"+tasks.QueueAgent+"}:pending"); got != replica {
		t.Fatalf("the slot's master is %s after the old master's return, want %s still", got, replica)
	}
	if holder, err := q.Active(ctx, issue); err != nil || holder != "" {
		t.Fatalf("lock of d-1 after the old master's return: %q %v, want none (released)", holder, err)
	}
	if seen := runTasks(t, c, 1); !slices.Equal(seen, []string{"d-6"}) {
		t.Fatalf("asynq ran %v after the old master's return, want d-6", seen)
	}
	qi, err := asynq.NewInspectorFromRedisClient(c).GetQueueInfo(tasks.QueueAgent)
	if err != nil || qi.Pending+qi.Active+qi.Scheduled+qi.Retry+qi.Archived != 0 || qi.Completed != 3 {
		t.Fatalf("the agent queue after the old master's return: %+v %v, want d-1, d-5 and d-6 completed and nothing else (d-1 not back)", qi, err)
	}
}

// slotNodes is the master and a replica of key's hash slot, of the nodes
// online.
func slotNodes(t *testing.T, c *redis.ClusterClient, key string) (master, replica string) {
	t.Helper()
	ctx := t.Context()
	slot, err := c.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	shards, err := c.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range shards {
		if !slices.ContainsFunc(sh.Slots, func(r redis.SlotRange) bool { return r.Start <= slot && slot <= r.End }) {
			continue
		}
		for _, n := range sh.Nodes {
			addr := net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
			switch {
			case n.Health != "online":
			case n.Role == "master":
				master = addr
			case replica == "":
				replica = addr
			}
		}
		return master, replica
	}
	t.Fatalf("no node serves slot %d", slot)
	return "", ""
}

// node answers one command on the node at addr itself, not through the
// cluster.
func node(t *testing.T, addr string, f func(context.Context, *redis.Client) (string, error)) string {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	s, _ := f(ctx, rdb)
	return s
}

func clusterInfo(t *testing.T, addr string) string {
	return node(t, addr, func(ctx context.Context, c *redis.Client) (string, error) { return c.ClusterInfo(ctx).Result() })
}

// infoField is field of an INFO section of the node at addr ("" unknown).
func infoField(t *testing.T, addr, section, field string) string {
	info := node(t, addr, func(ctx context.Context, c *redis.Client) (string, error) { return c.Info(ctx, section).Result() })
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

func infoInt(t *testing.T, addr, field string) int64 {
	n, _ := strconv.ParseInt(infoField(t, addr, "replication", field), 10, 64)
	return n
}

// fileHolds reports whether a file under dir contains s.
func fileHolds(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			found = found || bytes.Contains(b, []byte(s))
		}
		return nil
	})
	return found
}

// waitUntil polls cond; the bound only keeps a broken run from hanging.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 600 {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("never happened: %s", what)
}
