// Package redisconn opens the one Redis client a Patchwright process uses
// for asynq and for its own keys (locks, run records, slots), from the
// address forms operators run Redis with: one server (redis://, rediss://
// with TLS), Sentinel (redis-sentinel://, rediss-sentinel://) or a Redis
// Cluster (redis-cluster://, rediss-cluster://).
package redisconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Schemes of Sentinel addresses; the s in rediss-sentinel is TLS to the
// sentinels and to the master alike.
const (
	SchemeSentinel    = "redis-sentinel"
	SchemeSentinelTLS = "rediss-sentinel"
)

// Schemes of Redis Cluster addresses. A script of Patchwright's touches
// keys of one hash slot only (jobs.KeyPrefix carries the agent queue's
// hash tag), so it runs on a cluster as on one server.
const (
	SchemeCluster    = "redis-cluster"
	SchemeClusterTLS = "rediss-cluster"
)

// TLS is what a rediss address trusts beyond the system's roots.
type TLS struct {
	// CAPEM holds extra roots, PEM; nil trusts the system's only.
	CAPEM []byte
}

// Open returns a client for rawURL:
//
//	redis://[user:password@]host:port[/db]
//	rediss://[user:password@]host:port[/db]
//	redis-sentinel://[user:password@]host:port[,host:port...]/master[/db][?sentinel_password=...]
//	rediss-sentinel://... (the same, over TLS)
//	redis-cluster://[user:password@]host:port[,host:port...]
//	rediss-cluster://... (the same, over TLS)
//
// The user and password are the master's ACL user (Redis 6 and later);
// a sentinel that wants its own password gets sentinel_password. The
// client is a go-redis client asynq accepts as is
// (asynq.NewServerFromRedisClient): asynq and Patchwright's own keys share
// it, so they fail over together.
func Open(rawURL string, t TLS) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	switch u.Scheme {
	case "redis", "rediss":
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, err
		}
		if opt.TLSConfig, err = tlsConfig(opt.TLSConfig, t); err != nil {
			return nil, err
		}
		return redis.NewClient(opt), nil
	case SchemeSentinel, SchemeSentinelTLS:
		opt, err := sentinelOptions(u)
		if err != nil {
			return nil, err
		}
		if opt.TLSConfig, err = tlsConfig(opt.TLSConfig, t); err != nil {
			return nil, err
		}
		return redis.NewFailoverClient(opt), nil
	case SchemeCluster, SchemeClusterTLS:
		opt, err := clusterOptions(u)
		if err != nil {
			return nil, err
		}
		if opt.TLSConfig, err = tlsConfig(opt.TLSConfig, t); err != nil {
			return nil, err
		}
		return redis.NewClusterClient(opt), nil
	}
	return nil, fmt.Errorf("scheme %q: want redis, rediss, %s, %s, %s or %s", u.Scheme, SchemeSentinel, SchemeSentinelTLS, SchemeCluster, SchemeClusterTLS)
}

// ClusterReload is how often a cluster client reads the slots' masters
// again. go-redis does not reread them when a master stops answering, only
// on a MOVED or on this timer (60 s by default): after a crashed master's
// replica took over, every command of its slots, the whole queue's, fails
// until then (TestClusterFailover: 56 s with the default). The cost is one
// CLUSTER SLOTS per client each time.
const ClusterReload = 3 * time.Second

// clusterOptions reads a redis-cluster URL (see Open): seed nodes, from
// which the client learns the rest. A cluster has database 0 only, so no
// path is allowed.
func clusterOptions(u *url.URL) (*redis.ClusterOptions, error) {
	addrs, err := hostPorts(u.Host, "node")
	if err != nil {
		return nil, err
	}
	if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
		return nil, fmt.Errorf("path %q: a cluster has database 0 only", u.Path)
	}
	if len(u.Query()) > 0 {
		return nil, fmt.Errorf("options %q: a cluster address takes none", u.RawQuery)
	}
	opt := &redis.ClusterOptions{Addrs: addrs, ClusterStateReloadInterval: ClusterReload}
	if u.User != nil {
		opt.Username = u.User.Username()
		opt.Password, _ = u.User.Password()
	}
	if u.Scheme == SchemeClusterTLS {
		opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return opt, nil
}

// hostPorts splits a URL's host part on commas, each a host:port.
func hostPorts(hosts, what string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(hosts, ",") {
		if h, p, err := net.SplitHostPort(a); err != nil || h == "" || p == "" {
			return nil, fmt.Errorf("%s %q: want host:port", what, a)
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}

// sentinelOptions reads a redis-sentinel URL (see Open).
func sentinelOptions(u *url.URL) (*redis.FailoverOptions, error) {
	addrs, err := hostPorts(u.Host, "sentinel")
	if err != nil {
		return nil, err
	}
	opt := &redis.FailoverOptions{SentinelAddrs: addrs}
	path := strings.Split(strings.Trim(u.Path, "/"), "/")
	if path[0] == "" || len(path) > 2 {
		return nil, fmt.Errorf("path %q: want /master or /master/db", u.Path)
	}
	opt.MasterName = path[0]
	if len(path) == 2 {
		db, err := strconv.Atoi(path[1])
		if err != nil || db < 0 {
			return nil, fmt.Errorf("database %q: want a number", path[1])
		}
		opt.DB = db
	}
	if u.User != nil {
		opt.Username = u.User.Username()
		opt.Password, _ = u.User.Password()
	}
	q := u.Query()
	opt.SentinelPassword = q.Get("sentinel_password")
	q.Del("sentinel_password")
	for k := range q {
		return nil, fmt.Errorf("unknown option %q (only sentinel_password)", k)
	}
	if u.Scheme == SchemeSentinelTLS {
		opt.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return opt, nil
}

// tlsConfig adds t's roots to c, which is nil without TLS.
func tlsConfig(c *tls.Config, t TLS) (*tls.Config, error) {
	if len(t.CAPEM) == 0 {
		return c, nil
	}
	if c == nil {
		return nil, errors.New("a CA file was given but the address is not TLS (rediss:// or rediss-sentinel://)")
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(t.CAPEM) {
		return nil, errors.New("the CA file holds no PEM certificate")
	}
	c.RootCAs = pool
	return c, nil
}
