package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// legacyPrefix began Patchwright's keys before they carried the agent
// queue's hash tag (KeyPrefix). Run records (runstore) still use it and
// are not moved: no script touches them.
const legacyPrefix = "patchwright:"

// Moved counts what MigrateKeys did.
type Moved struct {
	// Renamed keys now have KeyPrefix's name, their values and TTLs
	// unchanged.
	Renamed int
	// Kept keys were left under the old name because the new one already
	// existed (a process of this version wrote it first); they expire by
	// their own TTL.
	Kept int
}

// MigrateKeys renames the keys a version before the hash tag wrote
// (patchwright:active:…, patchwright:spend:…) to KeyPrefix's names, so an
// upgraded process still sees the issue locks, delivery claims, spending
// and plans the old one left. Without it a lock held across the upgrade
// would be invisible and a second job could start for its issue. RENAMENX
// keeps each key's value and TTL and never overwrites a newer key; it is
// safe to run from every process at start-up, at once.
//
// A Redis Cluster is skipped: the old names could not have been used there
// (their scripts crossed slots), and a rename across slots is refused.
func MigrateKeys(ctx context.Context, rdb redis.UniversalClient) (Moved, error) {
	var m Moved
	if _, ok := rdb.(*redis.ClusterClient); ok {
		return m, nil
	}
	iter := rdb.Scan(ctx, 0, legacyPrefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		old := iter.Val()
		rest := strings.TrimPrefix(old, legacyPrefix)
		if strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, "run:") {
			continue
		}
		ok, err := rdb.RenameNX(ctx, old, KeyPrefix+rest).Result()
		switch {
		case err != nil && strings.Contains(err.Error(), "no such key"):
			// Expired or moved by another process since the scan.
		case err != nil:
			return m, fmt.Errorf("move %s: %w", old, err)
		case ok:
			m.Renamed++
		default:
			m.Kept++
		}
	}
	return m, iter.Err()
}
