package webhook

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/jobs/githubapi"
)

// DefaultPermissionTTL is how long a permission answer is reused: long
// enough to absorb a burst of deliveries, short enough that a revoked
// collaborator loses the commands within a minute.
const DefaultPermissionTTL = time.Minute

// maxCachedPermissions bounds the cache; past it, expired entries are swept.
const maxCachedPermissions = 10000

// AppGitHub is the GitHub interface over a *githubapi.App, with permission
// answers cached for a TTL (only successful answers are cached).
type AppGitHub struct {
	app *githubapi.App
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	cache map[string]cachedPermission
}

type cachedPermission struct {
	perm    githubapi.Permission
	expires time.Time
}

// NewGitHub wraps app; ttl <= 0 means DefaultPermissionTTL.
func NewGitHub(app *githubapi.App, ttl time.Duration) *AppGitHub {
	if ttl <= 0 {
		ttl = DefaultPermissionTTL
	}
	return &AppGitHub{app: app, ttl: ttl, now: time.Now, cache: map[string]cachedPermission{}}
}

// CanWrite implements GitHub with the collaborator-permission endpoint.
// author_association is never used: it misreports private org members.
func (g *AppGitHub) CanWrite(ctx context.Context, inst int64, owner, repo, user string) (bool, string, error) {
	key := strings.ToLower(owner + "/" + repo + "/" + user)
	g.mu.Lock()
	c, ok := g.cache[key]
	g.mu.Unlock()
	if ok && g.now().Before(c.expires) {
		return c.perm.CanWrite(), c.perm.String(), nil
	}
	p, err := g.app.Permission(ctx, inst, owner, repo, user)
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

// PullRequestHead implements GitHub.
func (g *AppGitHub) PullRequestHead(ctx context.Context, inst int64, owner, repo string, number int) (string, bool, error) {
	return g.app.PullRequestHead(ctx, inst, owner, repo, number)
}

// OpenPullRequest implements GitHub.
func (g *AppGitHub) OpenPullRequest(ctx context.Context, inst int64, owner, repo, branch string) (int, error) {
	return g.app.OpenPullRequest(ctx, inst, owner, repo, branch)
}
