package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Process is a redis-server (or, with Sentinel, redis-server --sentinel)
// of the test's own, on a free loopback port, with its files in a
// temporary directory: a server a test may stop and restart, unlike the
// shared one.
type Process struct {
	t    testing.TB
	Port int
	Dir  string
	conf string // a configuration file, first on the command line
	tls  bool   // Port is a TLS port (StartTLS)
	args []string
	cmd  *exec.Cmd
}

// Addr is the server's host:port.
func (p *Process) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.Port) }

// Start runs redis-server with args after its port and directory (for
// example "--appendonly", "yes"), waits until it answers and stops it when
// the test ends. The test is skipped under -short and fails without
// redis-server.
func Start(t testing.TB, args ...string) *Process {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	p := &Process{t: t, Port: FreePort(t), Dir: t.TempDir(), args: args}
	p.Restart()
	t.Cleanup(p.Stop)
	return p
}

// StartTLS runs a redis-server that speaks only TLS, with the given
// certificate and key files, not asking clients for certificates.
func StartTLS(t testing.TB, certFile, keyFile string) *Process {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	p := &Process{t: t, Port: FreePort(t), Dir: t.TempDir(), tls: true,
		args: []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-auth-clients", "no"}}
	p.Restart()
	t.Cleanup(p.Stop)
	return p
}

// StartSentinel runs a sentinel watching the master at masterAddr under
// name, quick to fail over (a second of silence).
func StartSentinel(t testing.TB, name, masterAddr string) *Process {
	t.Helper()
	host, port, _ := net.SplitHostPort(masterAddr)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("sentinel monitor %[1]s %[2]s %[3]s 1\nsentinel down-after-milliseconds %[1]s 1000\nsentinel failover-timeout %[1]s 5000\n", name, host, port)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Process{t: t, Port: FreePort(t), Dir: dir, conf: conf, args: []string{"--sentinel"}}
	p.Restart()
	t.Cleanup(p.Stop)
	return p
}

// Restart starts the server again (after Stop or Kill) on the same port
// and directory, so an append-only file is read back.
func (p *Process) Restart() {
	p.t.Helper()
	var args []string
	if p.conf != "" {
		args = append(args, p.conf)
	}
	args = append(args, "--bind", "127.0.0.1", "--dir", p.Dir, "--save", "")
	if p.tls {
		args = append(args, "--port", "0", "--tls-port", strconv.Itoa(p.Port))
	} else {
		args = append(args, "--port", strconv.Itoa(p.Port))
	}
	args = append(args, p.args...)
	cmd := exec.Command("redis-server", args...)
	cmd.Dir = p.Dir
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start redis-server: %v (apt-get install redis-server)", err)
	}
	p.cmd = cmd
	opt := &redis.Options{Addr: p.Addr(), MaxRetries: -1}
	if p.tls {
		// Only to see it answer; the test checks the certificate itself.
		opt.TLSConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		var reply redis.Error // NOAUTH, say: it answers
		if err == nil || errors.As(err, &reply) {
			return
		}
		if i == 100 {
			p.t.Fatalf("redis-server on %s never answered: %v", p.Addr(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the server with SIGTERM (an append-only file is flushed) and
// waits for it.
func (p *Process) Stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Kill ends the server with SIGKILL, as a crash would.
func (p *Process) Kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// FreePort returns a loopback TCP port nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// StartCluster runs a Redis Cluster of n masters (no replicas), each a
// redis-server of the test's own, joined with `redis-cli --cluster
// create`, and waits until every node reports the cluster ok.
func StartCluster(t testing.TB, n int) []*Process {
	t.Helper()
	return startCluster(t, n, 0)
}

// StartClusterReplicas runs a Redis Cluster of masters, each with
// replicas of its own, as StartCluster does; it returns every node, and
// which is whose replica is the cluster's to say (CLUSTER SLOTS). A node
// silent for 2 s is failed over, so that a test of a crash does not wait
// out the default 15 s. args go on each node's command line after the
// cluster's own (for example "--appendonly", "yes", so that a node
// restarted after a crash comes back with what it held).
func StartClusterReplicas(t testing.TB, masters, replicas int, args ...string) []*Process {
	t.Helper()
	return startCluster(t, masters, replicas, append([]string{"--cluster-node-timeout", "2000"}, args...)...)
}

func startCluster(t testing.TB, masters, replicas int, extra ...string) []*Process {
	t.Helper()
	n := masters * (1 + replicas)
	nodes := make([]*Process, n)
	addrs := make([]string, n)
	for i := range nodes {
		p := &Process{t: t, Port: clusterPort(t), Dir: t.TempDir(),
			args: append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--appendonly", "no"}, extra...)}
		p.Restart()
		t.Cleanup(p.Stop)
		nodes[i], addrs[i] = p, p.Addr()
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, p := range nodes {
		waitClusterOK(t, p.Addr())
	}
	if replicas > 0 {
		waitReplicas(t, nodes[0].Addr(), n)
	}
	return nodes
}

// waitReplicas waits until the node at addr knows n nodes online, masters
// and replicas (redis-cli attaches the replicas after the cluster is ok,
// and a replica is online once it has synchronised).
func waitReplicas(t testing.TB, addr string, n int) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	for range 200 {
		shards, err := rdb.ClusterShards(context.Background()).Result()
		online := 0
		for _, sh := range shards {
			for _, nd := range sh.Nodes {
				if nd.Health == "online" {
					online++
				}
			}
		}
		if err == nil && online == n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the replicas of the cluster at %s never all showed", addr)
}

// clusterPort is a free port whose cluster bus port (port+10000) is free
// too.
func clusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		p := FreePort(t)
		if p+10000 > 65535 {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}

// waitClusterOK waits until the node at addr answers cluster_state:ok.
func waitClusterOK(t testing.TB, addr string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	var info string
	for range 200 {
		info, _ = rdb.ClusterInfo(context.Background()).Result()
		if strings.Contains(info, "cluster_state:ok") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("cluster node %s never ok:\n%s", addr, info)
}
