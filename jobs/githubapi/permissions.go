package githubapi

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// DefaultPermissionTTL is how long a permission answer is reused: long
// enough to absorb a burst of deliveries, short enough that a revoked
// collaborator loses the commands within a minute.
const DefaultPermissionTTL = time.Minute

// maxCachedPermissions bounds the cache; past it, expired entries are swept.
const maxCachedPermissions = 10000

// PermissionCache answers whether a user may command Patchwright on a
// repository, from the collaborator-permission endpoint with answers
// cached for a TTL (only successful answers are cached). It embeds the
// App, so it also offers the App's other calls (the webhook's pull-request
// lookups).
type PermissionCache struct {
	*App
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	cache map[string]cachedPermission
}

type cachedPermission struct {
	perm    Permission
	expires time.Time
}

// NewPermissionCache wraps app; ttl <= 0 means DefaultPermissionTTL.
func NewPermissionCache(app *App, ttl time.Duration) *PermissionCache {
	if ttl <= 0 {
		ttl = DefaultPermissionTTL
	}
	return &PermissionCache{App: app, ttl: ttl, now: time.Now, cache: map[string]cachedPermission{}}
}

// CanWrite reports whether user has write, maintain or admin permission on
// repo, and the role GitHub reported (for a refusal reply), through the
// collaborator-permission endpoint. author_association is never used: it
// misreports private org members.
func (g *PermissionCache) CanWrite(ctx context.Context, repo tasks.Issue, user string) (bool, string, error) {
	key := strings.ToLower(repo.Owner + "/" + repo.Repo + "/" + user)
	g.mu.Lock()
	c, ok := g.cache[key]
	g.mu.Unlock()
	if ok && g.now().Before(c.expires) {
		return c.perm.CanWrite(), c.perm.String(), nil
	}
	p, err := g.App.Permission(ctx, repo, user)
	if err != nil {
		return false, "", err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.cache) >= maxCachedPermissions {
		for k, v := range g.cache {
			if !g.now().Before(v.expires) {
				delete(g.cache, k)
			}
		}
	}
	if len(g.cache) < maxCachedPermissions {
		g.cache[key] = cachedPermission{perm: p, expires: g.now().Add(g.ttl)}
	}
	return p.CanWrite(), p.String(), nil
}
