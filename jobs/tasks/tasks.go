// Package tasks is Patchwright's task catalogue: the task types, their
// payloads (IDs only), the queues and their limits, and building and
// decoding tasks (docs/design.md §2, §6). It imports nothing of ours, so
// the webhook, the queue (jobs), the worker and the pipeline all read the
// one catalogue.
package tasks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hibiken/asynq"
)

// Task types. The string values are stored in Redis with every task: never
// rename them while tasks of the old name may still be queued.
const (
	// TypeSolveIssue is a first (or new) attempt at an issue; payload SolveIssue.
	TypeSolveIssue = "issue:solve"
	// TypeRetryPR is another attempt on a pull request Patchwright opened,
	// with the reviewer's instructions; payload RetryPR.
	TypeRetryPR = "pr:retry"
	// TypeReply posts one short comment that answers a command or trigger
	// the webhook refused (no permission, already running, help); payload
	// Reply. It is a task so the webhook never waits on GitHub to answer and
	// so the delivery-ID task ID keeps a redelivery from replying twice.
	TypeReply = "comment:reply"
	// TypeDeleteBranch deletes agent/issue-N after its pull request was
	// closed or merged, if the branch is still where Patchwright left it;
	// payload DeleteBranch.
	TypeDeleteBranch = "branch:delete"
)

// Queue names and their settings. asynq's own defaults (25 retries, 30
// minutes) are wrong for a model run, so every task sets all three.
const (
	// QueueAgent holds solve and retry jobs.
	QueueAgent = "agent"
	// QueueReplies holds reply comments; the worker serves it first.
	QueueReplies = "replies"

	// AgentMaxRetry is how often a failed agent job is tried again. Jobs are
	// idempotent (docs/design.md §6), so a retry after a transient failure is safe.
	AgentMaxRetry = 3
	// AgentTimeout bounds one attempt: the default run budget of 30 minutes
	// (docs/design.md §4.3 limits) plus clone, setup, verification and publishing.
	AgentTimeout = 45 * time.Minute
	// ReplyMaxRetry and ReplyTimeout bound one reply comment.
	ReplyMaxRetry = 5
	ReplyTimeout  = time.Minute
	// Retention keeps a finished task (and so its task ID, the delivery ID)
	// for longer than GitHub offers redelivery (3 days), so a late
	// redelivery of a finished delivery is a conflict, not a second job.
	Retention = 4 * 24 * time.Hour
)

// Issue names one issue (or pull request) of one repository of one
// installation. Owner and Repo are as GitHub spells them.
type Issue struct {
	InstallationID int64  `json:"installation_id"`
	Owner          string `json:"owner"`
	Repo           string `json:"repo"`
	Number         int    `json:"number"`
}

// String is owner/repo#number, for logs and error messages.
func (i Issue) String() string { return fmt.Sprintf("%s/%s#%d", i.Owner, i.Repo, i.Number) }

func (i Issue) validate() error {
	switch {
	case i.InstallationID <= 0:
		return errors.New("installation_id missing")
	case i.Owner == "" || i.Repo == "":
		return errors.New("owner or repo missing")
	case i.Number <= 0:
		return errors.New("number missing")
	}
	return nil
}

// SolveIssue is the payload of TypeSolveIssue. It holds IDs only: the worker
// reads the issue itself, with a token it mints for the one repository.
type SolveIssue struct {
	Issue
	// DeliveryID is the X-GitHub-Delivery that caused the job; it is also the
	// task ID.
	DeliveryID string `json:"delivery_id"`
	// Requester is the login of the user who labelled or commented.
	Requester string `json:"requester"`
	// Instructions is free text from `/agent retry ...` on an issue; empty
	// for a label trigger.
	Instructions string `json:"instructions,omitempty"`
	// IssueHash pins the issue's text as it was when the trigger came
	// (IssueHash of its title and body): the worker refuses to run text
	// edited since. Empty in tasks from before it existed: not checked.
	IssueHash string `json:"issue_hash,omitempty"`
	// Plan asks for a read-only planning run (`/agent plan`): the plan is
	// posted on the issue and nothing is changed, pushed or opened.
	// Instructions are then the requester's changes for the plan.
	Plan bool `json:"plan,omitempty"`
	// ApprovedPlan is the plan text a writer approved (`/agent approve`),
	// as the planning run recorded it (Queue.SavePlan), never as a
	// comment reads: the attempt follows it, and Instructions are then
	// the approver's notes.
	ApprovedPlan string `json:"approved_plan,omitempty"`
	// PreviousPlan, with Plan, is the plan this planning run revises (a
	// `/agent retry` while the issue waited on that plan), as the earlier
	// run recorded it: the model gets it with the writer's changes
	// (Instructions).
	PreviousPlan string `json:"previous_plan,omitempty"`
	// Trigger is what started a plain solve: "" the trigger label,
	// TriggerAssigned the issue's assignment to the app.
	Trigger string `json:"trigger,omitempty"`
	// PlanTask is the task whose plan this job settles, so the worker
	// can say so on that plan's comment: the plan a new plan replaces,
	// the plan approved (with ApprovedPlan), or the waiting plan a
	// label's solve set aside. Empty when no plan waited.
	PlanTask string `json:"plan_task,omitempty"`
}

// SolveIssue.Trigger values: an issue assigned to the app, a tracking
// issue a schedule opened (jobs/schedule).
const (
	TriggerAssigned = "assigned"
	TriggerSchedule = "schedule"
)

// IssueHash is the pin of an issue's text: SHA-256 of its title and body,
// hex. The label approves the text it was put on, not what someone edits
// in later (a mid-run edit is an injection route).
func IssueHash(title, body string) string {
	sum := sha256.Sum256([]byte(title + "\x00" + body))
	return hex.EncodeToString(sum[:])
}

// RetryPR is the payload of TypeRetryPR. Issue is the issue the pull request
// belongs to (one active job per issue); PR is the pull request's number.
type RetryPR struct {
	Issue
	PR           int    `json:"pr"`
	DeliveryID   string `json:"delivery_id"`
	Requester    string `json:"requester"`
	Instructions string `json:"instructions,omitempty"`
	// IssueHash pins the issue's text at the retry's trigger, as
	// SolveIssue's does; empty: not checked.
	IssueHash string `json:"issue_hash,omitempty"`
	// CIHead is set for a retry the repository's own CI started: the
	// commit its checks failed on, which must still be the pull
	// request's head and the commit Patchwright pushed. Requester is
	// then empty (nobody asked) and DeliveryID is CIFixID's.
	CIHead string `json:"ci_head,omitempty"`
	// CIReported is what the event said failed ("test (GitHub Actions):
	// failure"), for the history when the checks cannot be read.
	CIReported string `json:"ci_reported,omitempty"`
	// Rebase is set for an update of the pull request to its moved base:
	// what to merge into the branch before the checks run again, the
	// commit the default branch was pushed to, or for `/agent rebase`
	// the base branch by name (its head when the task runs). The
	// branch's head must be the one Patchwright pushed. Requester is
	// empty for the automatic update.
	Rebase string `json:"rebase,omitempty"`
}

// CIFixID is the task ID (and DeliveryID) of the automatic fix attempt
// for CI failing on sha: one attempt per failing head, however many
// check_suite, check_run and workflow_run deliveries report it.
func CIFixID(repo Issue, sha string) string {
	return fmt.Sprintf("ci-%d-%s-%s-%s", repo.InstallationID, repo.Owner, repo.Repo, sha)
}

// DeleteBranch is the payload of TypeDeleteBranch: Issue names the
// repository and the issue whose branch it is, PR the closed pull
// request, and SHA the commit Patchwright last pushed there. The branch is
// deleted only while its head is still SHA: a person's push keeps it.
type DeleteBranch struct {
	Issue
	PR         int    `json:"pr"`
	SHA        string `json:"sha"`
	DeliveryID string `json:"delivery_id"`
}

// Reply is the payload of TypeReply: a comment to post on Issue, or,
// with Reaction, a reaction instead (on comment CommentID of Issue, or
// on the issue itself for CommentID 0). A refused person without write
// access gets a reaction after their first reply on an issue: they
// cannot make the app post comments at will.
type Reply struct {
	Issue
	DeliveryID string `json:"delivery_id"`
	Body       string `json:"body,omitempty"`
	// Reaction is one of GitHub's reaction contents (ReactionRefused).
	Reaction  string `json:"reaction,omitempty"`
	CommentID int64  `json:"comment_id,omitempty"`
}

// ReactionRefused is the reaction a refused command or label gets when
// its issue already had its one reply to someone without write access.
const ReactionRefused = "-1"

// MaxPlanBytes bounds a kept plan (the plan tool's text is bounded below
// it) and the plans a task carries.
const MaxPlanBytes = 16 << 10

// ReactionNoted is the reaction a writer's `/agent note` gets once the
// running job has it.
const ReactionNoted = "eyes"

// reactions are the contents GitHub accepts for a reaction.
var reactions = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

// HeaderEnqueuedAt is the agent tasks' header holding when the task was
// built (RFC 3339 with nanoseconds, UTC): the trigger's time as the
// application saw it, from which the worker measures the time to the pull
// request. A header rather than a payload field: the payload is the job's
// identity (IDs only), this is a measurement.
const HeaderEnqueuedAt = "enqueued_at"

// now is the clock of HeaderEnqueuedAt.
var now = time.Now

// NewSolveIssueTask builds the task for p with its queue, retry count,
// timeout, retention, task ID (the delivery ID) and HeaderEnqueuedAt set.
func NewSolveIssueTask(p SolveIssue) (*asynq.Task, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("solve task: %w", err)
	}
	return newTask(TypeSolveIssue, p, p.DeliveryID, agentQueue)
}

// NewRetryPRTask builds the task for p like NewSolveIssueTask.
func NewRetryPRTask(p RetryPR) (*asynq.Task, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("retry task: %w", err)
	}
	return newTask(TypeRetryPR, p, p.DeliveryID, agentQueue)
}

func enqueuedNow() map[string]string {
	return map[string]string{HeaderEnqueuedAt: now().UTC().Format(time.RFC3339Nano)}
}

// EnqueuedAt reads t's HeaderEnqueuedAt; zero when the task has none (a
// task from before it existed) or it does not parse.
func EnqueuedAt(t *asynq.Task) time.Time {
	at, err := time.Parse(time.RFC3339Nano, t.Headers()[HeaderEnqueuedAt])
	if err != nil {
		return time.Time{}
	}
	return at
}

// NewDeleteBranchTask builds the task for p, queued with the replies
// (it is one short call), its ID "branch:" plus the delivery ID.
func NewDeleteBranchTask(p DeleteBranch) (*asynq.Task, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("delete-branch task: %w", err)
	}
	return newTask(TypeDeleteBranch, p, "branch:"+p.DeliveryID, replyQueue)
}

func (p DeleteBranch) validate() error {
	if err := p.Issue.validate(); err != nil {
		return err
	}
	if p.PR <= 0 {
		return errors.New("pr missing")
	}
	if len(p.SHA) != 40 {
		return errors.New("sha missing")
	}
	return validDelivery(p.DeliveryID)
}

// NewReplyTask builds the task for p. Its task ID is "reply:" plus the
// delivery ID: one reply per delivery, however often it is redelivered.
func NewReplyTask(p Reply) (*asynq.Task, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("reply task: %w", err)
	}
	return newTask(TypeReply, p, "reply:"+p.DeliveryID, replyQueue)
}

// queue is a queue's settings for the tasks built for it.
type queue struct {
	name     string
	maxRetry int
	timeout  time.Duration
	// stamped: its tasks carry HeaderEnqueuedAt (the agent's, whose time
	// to a pull request is measured).
	stamped bool
}

var (
	agentQueue = queue{QueueAgent, AgentMaxRetry, AgentTimeout, true}
	replyQueue = queue{QueueReplies, ReplyMaxRetry, ReplyTimeout, false}
)

func newTask(typ string, payload any, id string, q queue) (*asynq.Task, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", typ, err)
	}
	var headers map[string]string
	if q.stamped {
		headers = enqueuedNow()
	}
	return asynq.NewTaskWithHeaders(typ, b, headers,
		asynq.TaskID(id),
		asynq.Queue(q.name),
		asynq.MaxRetry(q.maxRetry),
		asynq.Timeout(q.timeout),
		asynq.Retention(Retention),
	), nil
}

func (p SolveIssue) validate() error {
	if err := p.Issue.validate(); err != nil {
		return err
	}
	if p.Plan && p.ApprovedPlan != "" {
		return errors.New("a planning run cannot carry an approved plan")
	}
	if len(p.ApprovedPlan) > MaxPlanBytes {
		return fmt.Errorf("approved plan of %d bytes, over %d", len(p.ApprovedPlan), MaxPlanBytes)
	}
	if p.PreviousPlan != "" && !p.Plan {
		return errors.New("only a planning run revises a previous plan")
	}
	if len(p.PreviousPlan) > MaxPlanBytes {
		return fmt.Errorf("previous plan of %d bytes, over %d", len(p.PreviousPlan), MaxPlanBytes)
	}
	return validDelivery(p.DeliveryID)
}

func (p RetryPR) validate() error {
	if err := p.Issue.validate(); err != nil {
		return err
	}
	if p.PR <= 0 {
		return errors.New("pr missing")
	}
	if p.CIHead != "" && !ValidSHA(p.CIHead) {
		return errors.New("ci_head is not a commit SHA")
	}
	if p.Rebase != "" && !ValidSHA(p.Rebase) && (!branchNameRE.MatchString(p.Rebase) || strings.Contains(p.Rebase, "..")) {
		return errors.New("rebase is neither a commit SHA nor a branch name")
	}
	if p.Rebase != "" && p.CIHead != "" {
		return errors.New("a task is a CI fix or an update to the base, not both")
	}
	return validDelivery(p.DeliveryID)
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ValidSHA reports whether s is a full commit SHA-1 in lower-case hex.
func ValidSHA(s string) bool { return shaRE.MatchString(s) }

func (p Reply) validate() error {
	if err := p.Issue.validate(); err != nil {
		return err
	}
	switch {
	case p.Reaction != "" && !reactions[p.Reaction]:
		return fmt.Errorf("reaction %q is not one GitHub has", p.Reaction)
	case p.Reaction != "" && p.Body != "":
		return errors.New("both a body and a reaction")
	case p.Reaction == "" && strings.TrimSpace(p.Body) == "":
		return errors.New("body missing")
	}
	return validDelivery(p.DeliveryID)
}

func validDelivery(id string) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("delivery_id missing")
	}
	return nil
}

// Decode unmarshals a task payload strictly. A payload that does not decode
// or validate can never succeed, so the error wraps asynq.SkipRetry.
func Decode[T interface{ validate() error }](t *asynq.Task) (T, error) {
	var p T
	dec := json.NewDecoder(strings.NewReader(string(t.Payload())))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("decode %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	if err := p.validate(); err != nil {
		return p, fmt.Errorf("invalid %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return p, nil
}

// Attempt describes one try of a task. Handlers pass it to the pipeline
// explicitly so the pipeline never reads asynq's context helpers and tests
// can drive it without a queue (asynq issue #446).
type Attempt struct {
	// TaskID is the asynq task ID (the delivery ID for agent jobs).
	TaskID string
	// Retry is 0 on the first try, 1 on the first retry, and so on.
	Retry int
	// MaxRetry is the task's retry limit; Retry == MaxRetry is the last try.
	MaxRetry int
	// EnqueuedAt is the task's HeaderEnqueuedAt (EnqueuedAt); zero when
	// unknown.
	EnqueuedAt time.Time
	// Rerun says how the task's previous run ended when this one is not
	// its first (Queue.StartRun); RerunNone on a first run.
	Rerun Rerun
}

// Rerun is how a task's previous run ended, as its next run learns it.
type Rerun string

const (
	RerunNone Rerun = ""
	// RerunCrashed: the previous run started and never ended (its worker
	// died, or lost Redis, mid-run).
	RerunCrashed Rerun = "crashed"
	// RerunDrained: the previous run was handed back by a worker shutting
	// down.
	RerunDrained Rerun = "drained"
	// RerunFailed: the previous run ended with an error asynq retries.
	RerunFailed Rerun = "failed"
)

// Last reports whether this is the task's last try.
func (a Attempt) Last() bool { return a.Retry >= a.MaxRetry }
