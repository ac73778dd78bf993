package redisconn_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
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

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"notAURL":          "redis://%zz",
		"unknownScheme":    "memcached://127.0.0.1:11211",
		"clusterBadAddr":   "redis-cluster://127.0.0.1:7000,127.0.0.1",
		"clusterDB":        "redis-cluster://127.0.0.1:7000/1",
		"clusterOption":    "redis-cluster://127.0.0.1:7000?pool_size=3",
		"sentinelNoMaster": "redis-sentinel://127.0.0.1:26379",
		"sentinelBadAddr":  "redis-sentinel://127.0.0.1/mymaster",
		"sentinelDeepPath": "redis-sentinel://127.0.0.1:26379/mymaster/0/1",
		"sentinelBadDB":    "redis-sentinel://127.0.0.1:26379/mymaster/zero",
		"sentinelOption":   "redis-sentinel://127.0.0.1:26379/mymaster?pool_size=3",
		"badDB":            "redis://127.0.0.1:6379/zero",
	}
	for name, u := range cases {
		t.Run(name, func(t *testing.T) {
			if c, err := redisconn.Open(u, redisconn.TLS{}); err == nil {
				c.Close()
				t.Fatalf("Open(%q) = nil error", u)
			}
		})
	}
	if _, err := redisconn.Open("redis://127.0.0.1:6379", redisconn.TLS{CAPEM: []byte("x")}); err == nil || !strings.Contains(err.Error(), "not TLS") {
		t.Errorf("CA on a plain address: %v", err)
	}
	if _, err := redisconn.Open("rediss://127.0.0.1:6379", redisconn.TLS{CAPEM: []byte("not pem")}); err == nil || !strings.Contains(err.Error(), "no PEM") {
		t.Errorf("CA without PEM: %v", err)
	}
}

func ping(t *testing.T, c redis.UniversalClient) {
	t.Helper()
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(t.Context(), "k").Result(); err != nil || v != "v" {
		t.Fatalf("get: %q %v", v, err)
	}
}

// TestACLUser: the URL's user is an ACL user, and a wrong password is
// refused (the user is not silently dropped).
func TestACLUser(t *testing.T) {
	t.Parallel()
	p := redistest.Start(t, "--user", "default", "off", "--user", "patchwright", "on", ">s3cret", "~*", "&*", "+@all")
	good, err := redisconn.Open("redis://patchwright:s3cret@"+p.Addr()+"/0", redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	ping(t, good)
	bad, err := redisconn.Open("redis://patchwright:wrong@"+p.Addr()+"/0", redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if err := bad.Ping(t.Context()).Err(); err == nil {
		t.Fatal("a wrong password was let in")
	}
}

// TestTLS talks to a TLS-only redis-server whose certificate a CA file
// vouches for; without the CA the same address is refused.
func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caPEM := writeCert(t, dir)
	p := redistest.StartTLS(t, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	c, err := redisconn.Open("rediss://"+p.Addr()+"/0", redisconn.TLS{CAPEM: caPEM})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ping(t, c)
	untrusted, err := redisconn.Open("rediss://"+p.Addr()+"/0", redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer untrusted.Close()
	if err := untrusted.Ping(t.Context()).Err(); err == nil {
		t.Fatal("a certificate no root vouches for was accepted")
	}
	plain, err := redisconn.Open("redis://"+p.Addr()+"/0", redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.Ping(t.Context()).Err(); err == nil {
		t.Fatal("plain text reached a TLS-only server")
	}
}

func writeCert(t *testing.T, dir string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redis"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPEM
}

// TestSentinelFailover runs a master, its replica and a sentinel, all
// real, on loopback. A job enqueued through the sentinel address survives
// the master's SIGKILL: once the sentinel promotes the replica, the same
// client finds the new master, the issue's lock still names the job, and
// a new job is enqueued there.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--appendonly", "yes")
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	sentinel := redistest.StartSentinel(t, "pw", master.Addr())
	admin := redis.NewClient(&redis.Options{Addr: sentinel.Addr()})
	defer admin.Close()
	until(t, "the sentinel sees the replica", func(ctx context.Context) error {
		rs, err := admin.Do(ctx, "SENTINEL", "REPLICAS", "pw").Slice()
		if err == nil && len(rs) == 0 {
			err = errors.New("no replica yet")
		}
		return err
	})

	c, err := redisconn.Open("redis-sentinel://"+sentinel.Addr()+"/pw/0", redisconn.TLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := jobs.NewQueue(c)
	first := tasks.SolveIssue{Issue: tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 1}, DeliveryID: "d-1", Requester: "o"}
	if res, err := q.EnqueueSolve(t.Context(), first); err != nil || res.Outcome != jobs.Enqueued {
		t.Fatalf("before failover: %+v %v", res, err)
	}
	// The replica has it before the master goes.
	if n, err := c.Do(t.Context(), "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}

	master.Kill()
	until(t, "the sentinel promotes the replica", func(ctx context.Context) error {
		addr, err := admin.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "pw").StringSlice()
		if err == nil && net.JoinHostPort(addr[0], addr[1]) != replica.Addr() {
			err = errors.New("master is still " + strings.Join(addr, ":"))
		}
		return err
	})
	until(t, "the client writes to the new master", func(ctx context.Context) error {
		return c.Set(ctx, "after", "1", 0).Err()
	})
	again := first
	again.DeliveryID = "d-2"
	if res, err := q.EnqueueSolve(t.Context(), again); err != nil || res.Outcome != jobs.Busy || res.ActiveTaskID != "d-1" {
		t.Fatalf("the lock after failover: %+v %v, want busy with d-1", res, err)
	}
	second := tasks.SolveIssue{Issue: tasks.Issue{InstallationID: 1, Owner: "o", Repo: "r", Number: 2}, DeliveryID: "d-3", Requester: "o"}
	if res, err := q.EnqueueSolve(t.Context(), second); err != nil || res.Outcome != jobs.Enqueued {
		t.Fatalf("after failover: %+v %v", res, err)
	}
	pending, err := asynq.NewInspectorFromRedisClient(c).ListPendingTasks(tasks.QueueAgent)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending after failover: %d tasks, %v; want both", len(pending), err)
	}
}

// until retries f (each try bounded by a second) until it succeeds; the
// outer bound only keeps a broken setup from hanging the suite.
func until(t *testing.T, what string, f func(context.Context) error) {
	t.Helper()
	var err error
	for range 300 {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err = f(ctx)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: never happened: %v", what, err)
}
