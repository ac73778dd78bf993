package outcomes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// LatestKey is the Redis hash of each issue's newest agent pull request
// (field: the issue's, as fieldOf names it), which tells a pull request a
// newer one replaced.
const LatestKey = "patchwright:outcomes:latest"

// newest records pr as issue's newest pull request and, when it replaces
// an older one already classified as closed unmerged, marks that one
// superseded: the close may be classified before or after the new pull
// request is published, and either order ends the same.
func (s *Store) newest(ctx context.Context, issue tasks.Issue, pr int) error {
	prev, err := s.latest(ctx, issue)
	if err != nil || prev >= pr {
		return err
	}
	if err := s.Redis.HSet(ctx, LatestKey, fieldOf(issue), pr).Err(); err != nil {
		return fmt.Errorf("note the newest pull request of %s: %w", issue, err)
	}
	if prev == 0 {
		return nil
	}
	old := issue
	old.Number = prev
	data, err := s.Redis.HGet(ctx, Key, fieldOf(old)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil // not classified yet: Classify will see pr
	}
	var r Record
	if err != nil || json.Unmarshal(data, &r) != nil || r.State != StateClosed {
		return err
	}
	r.State = StateSuperseded
	return s.Put(ctx, r)
}

// latest is issue's newest pull request noted, 0 for none.
func (s *Store) latest(ctx context.Context, issue tasks.Issue) (int, error) {
	v, err := s.Redis.HGet(ctx, LatestKey, fieldOf(issue)).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the newest pull request of %s: %w", issue, err)
	}
	n, _ := strconv.Atoi(v)
	return n, nil
}

// superseded reports whether a newer pull request of the issue that head
// (agent/issue-N) belongs to has been published than pr.
func (s *Store) superseded(ctx context.Context, pr tasks.Issue, head string) (bool, error) {
	n, ok := jobs.ParseAgentBranch(head)
	if !ok {
		return false, nil
	}
	issue := pr
	issue.Number = n
	newest, err := s.latest(ctx, issue)
	return newest > pr.Number, err
}
