package githubjob

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// OrgConfigTTL is how long an organisation's default .github/agent.yml
// is reused before it is read again: every job of the organisation
// would otherwise ask GitHub for the same file, and a change to it
// should still reach the next jobs within a minute.
const OrgConfigTTL = time.Minute

// orgConfigs caches each owner's default configuration (nil for none)
// per installation. Errors are not cached. The zero value is ready.
type orgConfigs struct {
	mu sync.Mutex
	m  map[orgKey]orgConfig
}

type orgKey struct {
	installation int64
	owner        string
}

type orgConfig struct {
	data []byte
	read time.Time
}

// orgConfig is the organisation's default .github/agent.yml for issue's
// repository: the file of its owner's `.github` repository, default
// branch, nil when there is none.
func (p *Pipeline) orgConfig(ctx context.Context, issue tasks.Issue) ([]byte, error) {
	key := orgKey{issue.InstallationID, strings.ToLower(issue.Owner)}
	now := p.now()
	c := &p.orgConfigs
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && now.Sub(e.read) < OrgConfigTTL {
		return e.data, nil
	}
	data, err := p.GitHub.OrgFile(ctx, issue, config.Path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[orgKey]orgConfig{}
	}
	c.m[key] = orgConfig{data: data, read: now}
	c.mu.Unlock()
	return data, nil
}
