package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// memGitHub keeps comments and branches in memory.
type memGitHub struct {
	mu       sync.Mutex
	comments []githubapi.Comment
	// landedFail makes the next PostComment store the comment and fail,
	// as a 502 after GitHub stored it.
	landedFail bool
	branches   map[string]string
	deleted    []string
	reactions  []string
}

func (m *memGitHub) PostComment(_ context.Context, _ tasks.Issue, body string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.comments = append(m.comments, githubapi.Comment{ID: int64(len(m.comments) + 1), Body: body})
	if m.landedFail {
		m.landedFail = false
		return 0, errors.New("HTTP 502")
	}
	return int64(len(m.comments)), nil
}

func (m *memGitHub) AddReaction(_ context.Context, _ tasks.Issue, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reactions = append(m.reactions, "issue:"+content)
	return nil
}

func (m *memGitHub) AddCommentReaction(_ context.Context, _ tasks.Issue, id int64, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reactions = append(m.reactions, fmt.Sprintf("comment %d:%s", id, content))
	return nil
}

func (m *memGitHub) Comments(context.Context, tasks.Issue) ([]githubapi.Comment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]githubapi.Comment(nil), m.comments...), nil
}

func (m *memGitHub) DeleteBranchAt(_ context.Context, _ tasks.Issue, b, sha string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if head, ok := m.branches[b]; !ok || head != sha {
		return false, nil
	}
	delete(m.branches, b)
	m.deleted = append(m.deleted, b)
	return true, nil
}

func memHandlers(t *testing.T, gh *memGitHub) *Handlers {
	return &Handlers{Pipeline: NoModelPipeline{}, Commenter: gh, Branches: gh, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
}

// A reply whose POST was stored but answered 502 is not posted again by
// the task's retry.
func TestReplyIsPostedOnceAcrossAServerError(t *testing.T) {
	gh := &memGitHub{landedFail: true}
	h := memHandlers(t, gh)
	task, err := tasks.NewReplyTask(tasks.Reply{Issue: issue, DeliveryID: "d-reply", Body: "Nothing is running for this issue."})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.reply(context.Background(), task); err == nil {
		t.Fatal("the 502 was not reported, so asynq would not retry")
	}
	if err := h.reply(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if len(gh.comments) != 1 || !strings.HasPrefix(gh.comments[0].Body, "Nothing is running") {
		t.Fatalf("comments: %+v, want the one reply", gh.comments)
	}
}

// A reply with a reaction reacts (to its comment, or to the issue) and
// posts nothing; a reaction GitHub has not is refused when built.
func TestReplyReactionPostsNothing(t *testing.T) {
	gh := &memGitHub{}
	h := memHandlers(t, gh)
	for _, p := range []tasks.Reply{
		{Issue: issue, DeliveryID: "d-1", Reaction: tasks.ReactionRefused, CommentID: 42},
		{Issue: issue, DeliveryID: "d-2", Reaction: tasks.ReactionRefused},
	} {
		task, err := tasks.NewReplyTask(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.reply(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	if len(gh.comments) != 0 || strings.Join(gh.reactions, ",") != "comment 42:-1,issue:-1" {
		t.Fatalf("comments %+v, reactions %v", gh.comments, gh.reactions)
	}
	for _, bad := range []tasks.Reply{
		{Issue: issue, DeliveryID: "d-3", Reaction: "shrug"},
		{Issue: issue, DeliveryID: "d-4", Reaction: "-1", Body: "and a comment"},
	} {
		if _, err := tasks.NewReplyTask(bad); err == nil {
			t.Errorf("reply %+v accepted", bad)
		}
	}
}

func TestDeleteBranchOnlyWhereNobodyPushed(t *testing.T) {
	const pushed, other = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	gh := &memGitHub{branches: map[string]string{"agent/issue-5": pushed, "agent/issue-6": other}}
	h := memHandlers(t, gh)
	for _, n := range []int{5, 6, 7} { // 7 has no branch at all
		i := issue
		i.Number = n
		task, err := tasks.NewDeleteBranchTask(tasks.DeleteBranch{Issue: i, PR: 10 + n, SHA: pushed, DeliveryID: "d-close"})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.deleteBranch(context.Background(), task); err != nil {
			t.Fatalf("#%d: %v", n, err)
		}
	}
	if len(gh.deleted) != 1 || gh.deleted[0] != "agent/issue-5" {
		t.Fatalf("deleted %v, want only agent/issue-5 (agent/issue-6 has someone's commit)", gh.deleted)
	}
	if _, ok := gh.branches["agent/issue-6"]; !ok {
		t.Fatal("agent/issue-6 is gone")
	}
	// Without a client for branches the task cannot succeed: no retries.
	h = &Handlers{Commenter: nopCommenter{}, Logger: h.Logger}
	task, _ := tasks.NewDeleteBranchTask(tasks.DeleteBranch{Issue: issue, PR: 15, SHA: pushed, DeliveryID: "d-close"})
	if err := h.deleteBranch(context.Background(), task); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("no branch client: %v", err)
	}
}

type countingApprovals struct{ prs []tasks.Issue }

func (c *countingApprovals) Approval(_ context.Context, pr tasks.Issue) error {
	c.prs = append(c.prs, pr)
	return nil
}

// An approval task reaches Approvals with its pull request; without
// Approvals it cannot succeed and is not retried; a bad payload is
// refused before it is queued.
func TestApprovalTask(t *testing.T) {
	pr := issue
	pr.Number = 12
	task, err := tasks.NewApprovalTask(tasks.Approval{Issue: pr, DeliveryID: "d-review"})
	if err != nil {
		t.Fatal(err)
	}
	a := &countingApprovals{}
	h := &Handlers{Commenter: nopCommenter{}, Approvals: a, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
	if err := h.approval(context.Background(), task); err != nil || len(a.prs) != 1 || a.prs[0] != pr {
		t.Fatalf("approval task: %v, %+v", err, a.prs)
	}
	h.Approvals = nil
	if err := h.approval(context.Background(), task); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("no Approvals: %v", err)
	}
	if _, err := tasks.NewApprovalTask(tasks.Approval{Issue: pr}); err == nil {
		t.Error("an approval task without a delivery ID was built")
	}
}

type countingOutcomes struct{ prs []tasks.Issue }

func (c *countingOutcomes) Outcome(_ context.Context, pr tasks.Issue) error {
	c.prs = append(c.prs, pr)
	return nil
}

// An outcome task reaches Outcomes with its pull request through the
// mux; without
// Outcomes it cannot succeed and is not retried; a bad payload is
// refused before it is queued.
func TestOutcomeTask(t *testing.T) {
	pr := issue
	pr.Number = 12
	task, err := tasks.NewOutcomeTask(tasks.Outcome{Issue: pr, DeliveryID: "d-closed"})
	if err != nil {
		t.Fatal(err)
	}
	o := &countingOutcomes{}
	h := &Handlers{Commenter: nopCommenter{}, Outcomes: o, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
	if err := h.Mux().ProcessTask(context.Background(), task); err != nil || len(o.prs) != 1 || o.prs[0] != pr {
		t.Fatalf("outcome task: %v, %+v", err, o.prs)
	}
	h.Outcomes = nil
	if err := h.outcome(context.Background(), task); !errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("no Outcomes: %v", err)
	}
	if _, err := tasks.NewOutcomeTask(tasks.Outcome{Issue: pr}); err == nil {
		t.Error("an outcome task without a delivery ID was built")
	}
}
