// Package webhook receives GitHub's webhook deliveries at POST /webhook: it
// caps the body, verifies the HMAC-SHA256 signature, dispatches on the event,
// checks the trigger and the sender's permission, and enqueues a job. It
// never does the work itself (docs/design.md §4.7).
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/githubapi"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/webhook/payload"
)

// MaxBodyBytes is the largest body accepted: GitHub caps payloads at 25 MiB.
const MaxBodyBytes = 25 << 20

// DefaultTriggerLabel is the label that asks Patchwright to solve an issue.
const DefaultTriggerLabel = "agent"

// Queue is what the handler needs from jobs.Queue.
type Queue interface {
	EnqueueSolve(ctx context.Context, p tasks.SolveIssue) (jobs.EnqueueResult, error)
	// EnqueueSolveBehind queues a solve behind the issue's running job.
	EnqueueSolveBehind(ctx context.Context, p tasks.SolveIssue) (jobs.EnqueueResult, error)
	EnqueueRetry(ctx context.Context, p tasks.RetryPR) (jobs.EnqueueResult, error)
	// DeferUpdate keeps an update past jobs.MaxUpdatesPerPush for later.
	DeferUpdate(ctx context.Context, p tasks.RetryPR) error
	EnqueueReply(ctx context.Context, p tasks.Reply) (jobs.EnqueueResult, error)
	Cancel(ctx context.Context, issue tasks.Issue, requester string) (string, error)
	Worked(ctx context.Context, issue tasks.Issue) (bool, error)
	EnqueueDeleteBranch(ctx context.Context, p tasks.DeleteBranch) (jobs.EnqueueResult, error)
	// EnqueueApproval has a pull request's approval check brought up to
	// date.
	EnqueueApproval(ctx context.Context, p tasks.Approval) (jobs.EnqueueResult, error)
	// EnqueueOutcome has a closed agent pull request classified.
	EnqueueOutcome(ctx context.Context, p tasks.Outcome) (jobs.EnqueueResult, error)
	// AddNote stores a writer's note for the job active on issue.
	AddNote(ctx context.Context, issue tasks.Issue, n jobs.Note) (jobs.NoteOutcome, error)
	// CancelRepo cancels every active job of owner/repo (of owner, for
	// repo "").
	CancelRepo(ctx context.Context, owner, repo, requester string) ([]string, error)
	// LatestPlan is the issue's latest plan from a planning run, for
	// `/agent approve`.
	LatestPlan(ctx context.Context, issue tasks.Issue) (jobs.PlanRecord, bool, error)
	// ApprovePlan records the approval of the issue's plan of task: the
	// issue no longer waits on a plan, and `/agent retry` starts attempts
	// again.
	ApprovePlan(ctx context.Context, issue tasks.Issue, task, by string) (bool, error)
	// ApprovedPin is the pin of the issue text a writer last approved,
	// which a CI fix carries; ok is false when none is known.
	ApprovedPin(ctx context.Context, issue tasks.Issue) (pin string, ok bool, err error)
	// ClaimStrangerReply claims the issue's one reply to people without
	// write access for a delivery; false: an earlier delivery had it.
	ClaimStrangerReply(ctx context.Context, issue tasks.Issue, id string) (bool, error)
	// SameStart reports whether task taskID is a plain start of the
	// issue text pinned as pin by the other trigger (assign.go).
	SameStart(ctx context.Context, taskID, pin, trigger string) (bool, error)
}

// GitHub is the part of the GitHub API the handler reads, acting as an
// installation; *githubapi.PermissionCache satisfies it. Repository calls
// ignore the tasks.Issue's Number; GetPullRequest takes the pull request's.
type GitHub interface {
	// CanWrite reports whether user has write, maintain or admin permission
	// on the repository, and the role GitHub reported (for the refusal
	// reply).
	CanWrite(ctx context.Context, repo tasks.Issue, user string) (ok bool, role string, err error)
	GetPullRequest(ctx context.Context, pr tasks.Issue) (githubapi.PullRequest, error)
	// FindPullRequest finds the open pull request from branch; ok is false
	// when there is none.
	FindPullRequest(ctx context.Context, repo tasks.Issue, branch string) (pr githubapi.PullRequest, ok bool, err error)
	// GetIssue reads an issue's text, to pin it for a retry asked on its
	// pull request.
	GetIssue(ctx context.Context, issue tasks.Issue) (githubapi.IssueText, error)
	// AgentPullRequests lists the open pull requests into base from the
	// repository's own agent branches.
	AgentPullRequests(ctx context.Context, repo tasks.Issue, base string) ([]githubapi.PullRequest, error)
}

// Config configures a Handler.
type Config struct {
	// Secret is the webhook secret; required (New refuses an empty one).
	Secret []byte
	// BotLogin is the app's bot user, "<app-slug>[bot]"; required. Its pull
	// requests are the ones `/agent retry` works on, and its own comments
	// never trigger anything.
	BotLogin string
	// AppID is the app's ID: check suites and runs of this app are
	// Patchwright's own and never start a CI fix. 0: told apart by the
	// slug in BotLogin only.
	AppID int64
	// TriggerLabel is the label that starts a job; default DefaultTriggerLabel.
	TriggerLabel string
	// Logger is the base logger; default slog.Default().
	Logger *slog.Logger
	// MaxBodies is how many bodies are read at once, before their
	// signature is known; past it a delivery is answered 503 with
	// Retry-After. Default DefaultMaxBodies.
	MaxBodies int
	// MaxBodyBytes bounds the bytes those bodies hold together; default
	// DefaultMaxBodyBytes, at least MinBodyBytes (one largest body).
	MaxBodyBytes int64
	// Meanings remembers what deliveries meant, so a signed body replayed
	// under a new delivery ID is a duplicate (see replay.go); *jobs.Queue
	// satisfies it. Nil: only delivery IDs are deduplicated.
	Meanings Meanings
	// Audit appends a command or decision to the audit log (jobs.Queue's
	// Audit with the operator's retention); nil: none is kept.
	Audit func(ctx context.Context, e jobs.AuditEntry) error
}

// Handler is the webhook's http.Handler.
type Handler struct {
	cfg    Config
	queue  Queue
	github GitHub
	limit  *bodyLimit
	// claiming is queue when it also holds the Meanings and can claim
	// one in the round trip of a solve enqueue; nil otherwise.
	claiming claimingQueue
	// macs recycles the signature's HMACs: a reset one restores its keyed
	// state instead of allocating two digests and hashing the key's pads.
	macs sync.Pool
}

// New returns the webhook handler. It fails without a secret (go-github's
// ValidatePayload would accept unsigned bodies then) or a bot login.
func New(cfg Config, queue Queue, gh GitHub) (*Handler, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("webhook: no secret configured")
	}
	if cfg.BotLogin == "" {
		return nil, errors.New("webhook: no bot login configured")
	}
	if cfg.TriggerLabel == "" {
		cfg.TriggerLabel = DefaultTriggerLabel
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBodies <= 0 {
		cfg.MaxBodies = DefaultMaxBodies
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxBodyBytes < MinBodyBytes {
		return nil, fmt.Errorf("webhook: body bytes bound %d is below one largest body (%d)", cfg.MaxBodyBytes, MinBodyBytes)
	}
	h := &Handler{cfg: cfg, queue: queue, github: gh, limit: newBodyLimit(cfg.MaxBodies, cfg.MaxBodyBytes)}
	h.macs.New = func() any { return hmac.New(sha256.New, h.cfg.Secret) }
	if c, ok := queue.(claimingQueue); ok && cfg.Meanings != nil && any(cfg.Meanings) == any(queue) {
		h.claiming = c
	}
	return h, nil
}

// delivery is one verified request.
type delivery struct {
	id    string
	event string
	// doc is the body scanned once for its event, read by the replay
	// check and the event's handler; it holds slices of the body, so it
	// lives no longer than the request.
	doc *payload.Doc
	// meaning is the meaning key still to be claimed (claimMeaning).
	meaning string
	log     *slog.Logger
	// audit is what the delivery asked and who asked, filled in by the
	// event's handler where it decides (audited); handle records it with
	// the result. Shared by the delivery's copies.
	audit *jobs.AuditEntry
}

// audited notes the act the delivery asks for, for the audit log.
func (d delivery) audited(action, actor string, issue tasks.Issue) {
	if d.audit == nil {
		return
	}
	*d.audit = jobs.AuditEntry{Action: action, Actor: actor, Installation: issue.InstallationID,
		Repo: issue.Owner + "/" + issue.Repo, Issue: issue.Number}
}

// response is an HTTP status and a one-line message for the delivery log
// on GitHub's side.
type response struct {
	status int
	msg    string
	// retryAfter is the Retry-After header, seconds; "" for none.
	retryAfter string
}

func done(status int, format string, args ...any) response {
	return response{status: status, msg: fmt.Sprintf(format, args...)}
}

// deliveryIDPattern accepts GitHub's GUIDs and anything similar; the ID
// becomes a task ID and part of Redis keys, so it is kept plain.
var deliveryIDPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,100}$`)

// ServeHTTP answers with the statuses of docs/design.md §4.7:
//
//	202 a job was enqueued
//	200 nothing to do: ping, an ignored event or action, a duplicate
//	    delivery, or a trigger answered with a reply comment
//	400 missing X-GitHub-Event or X-GitHub-Delivery, malformed JSON, or a
//	    content type other than application/json (a form-encoded delivery,
//	    application/x-www-form-urlencoded, is refused: configure the
//	    webhook to send JSON, as GitHub Apps always do)
//	401 missing, malformed or wrong X-Hub-Signature-256, or SHA-1 only
//	405 a method other than POST
//	413 body over MaxBodyBytes
//	503 Redis or GitHub did not answer, or too many bodies are being read
//	    (with Retry-After); the delivery shows as failed and is redelivered
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := h.serve(r)
	if res.retryAfter != "" {
		w.Header().Set("Retry-After", res.retryAfter)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(res.status)
	io.WriteString(w, res.msg+"\n")
}

func (h *Handler) serve(r *http.Request) response {
	if r.Method != http.MethodPost {
		return done(http.StatusMethodNotAllowed, "POST only")
	}
	event := r.Header.Get("X-GitHub-Event")
	if event == "" {
		return done(http.StatusBadRequest, "missing X-GitHub-Event")
	}
	id := r.Header.Get("X-GitHub-Delivery")
	if !deliveryIDPattern.MatchString(id) {
		return done(http.StatusBadRequest, "missing or malformed X-GitHub-Delivery")
	}
	log := h.cfg.Logger.With(logkey.Event, event, logkey.Delivery, id)
	if r.ContentLength > MaxBodyBytes {
		return done(http.StatusRequestEntityTooLarge, "body over %d bytes", MaxBodyBytes)
	}
	// A request that cannot be signed is refused before its body is read.
	want, err := parseSignature(r.Header.Get("X-Hub-Signature-256"), r.Header.Get("X-Hub-Signature"))
	if err != nil {
		log.Warn("refused delivery", logkey.Err, err)
		return done(http.StatusUnauthorized, "%v", err)
	}
	mac := h.macs.Get().(hash.Hash)
	defer h.putMAC(mac)
	body, err := h.limit.read(http.MaxBytesReader(nil, r.Body, MaxBodyBytes), r.ContentLength, mac)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errBusy):
		log.Warn("refused delivery: too many bodies being read", "max_bodies", h.cfg.MaxBodies, "max_body_bytes", h.cfg.MaxBodyBytes)
		return response{status: http.StatusServiceUnavailable, msg: errBusy.Error(), retryAfter: busyRetryAfter}
	case errors.As(err, &tooLarge):
		return done(http.StatusRequestEntityTooLarge, "body over %d bytes", MaxBodyBytes)
	case err != nil:
		return done(http.StatusBadRequest, "read body: %v", err)
	}
	defer body.done()
	if err := checkSum(want, mac.Sum(nil)); err != nil {
		log.Warn("refused delivery", logkey.Err, err)
		return done(http.StatusUnauthorized, "%v", err)
	}
	body.verified()
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return done(http.StatusBadRequest, "content type must be application/json")
	}
	d := delivery{id: id, event: event, doc: payload.Scan(event, body.Bytes()), log: log, audit: &jobs.AuditEntry{}}
	return h.handle(r.Context(), d)
}

// putMAC resets an HMAC and gives it back for the next delivery.
func (h *Handler) putMAC(mac hash.Hash) {
	mac.Reset()
	h.macs.Put(mac)
}

// handle dispatches a verified delivery, once per meaning (replay.go).
func (h *Handler) handle(ctx context.Context, d delivery) response {
	m, dup, err := h.claimMeaning(ctx, &d)
	if err != nil {
		d.log.Error("delivery failed", logkey.Err, err)
		return done(http.StatusServiceUnavailable, "unavailable, redeliver later: %v", err)
	}
	if dup != "" {
		return replayed(d, dup)
	}
	res, err := h.dispatch(ctx, d)
	if err != nil {
		d.log.Error("delivery failed", logkey.Err, err)
		h.unclaimMeaning(ctx, d, m)
		return done(http.StatusServiceUnavailable, "unavailable, redeliver later: %v", err)
	}
	d.log.Info("delivery handled", "status", res.status, "result", res.msg)
	h.recordAudit(ctx, d, res)
	return res
}

// recordAudit appends the delivery's act, if it asked for one, with what
// was decided. A failed append is logged: the act itself stands.
func (h *Handler) recordAudit(ctx context.Context, d delivery, res response) {
	if h.cfg.Audit == nil || d.audit == nil || d.audit.Action == "" {
		return
	}
	// A redelivery or replay did nothing: every such answer says so first.
	if strings.HasPrefix(res.msg, "duplicate delivery") {
		return
	}
	e := *d.audit
	e.Result, e.Delivery = res.msg, d.id
	if err := h.cfg.Audit(ctx, e); err != nil {
		d.log.Error("audit log: could not record the delivery's act", logkey.Err, err)
	}
}

// dispatch looks the event's handler up. Errors are dependency failures
// (Redis, GitHub); bad input is a response.
func (h *Handler) dispatch(ctx context.Context, d delivery) (response, error) {
	if res, ok, err := h.alwaysSent(ctx, d); ok {
		return res, err
	}
	// The events app.yml subscribes to: exactly these (a test in
	// webhook/setup compares the two lists).
	switch d.event {
	case "issues":
		return h.onIssues(ctx, d)
	case "issue_comment":
		return h.onIssueComment(ctx, d)
	case "pull_request":
		return h.onPullRequest(ctx, d)
	case "pull_request_review":
		return h.onReview(ctx, d)
	case "check_suite", "check_run", "workflow_run":
		return h.onCheck(ctx, d)
	case "push":
		return h.onPush(ctx, d)
	}
	// Events with a handler are validated as they are parsed; the rest
	// here, so a malformed body is 400 whatever its event.
	if d.doc.Err() != nil {
		return done(http.StatusBadRequest, "body is not valid JSON"), nil
	}
	if d.event == "ping" {
		return done(http.StatusOK, "pong"), nil
	}
	return done(http.StatusOK, "ignored event %q", d.event), nil
}

// alwaysSent handles the events GitHub sends every app without a
// subscription (a manifest cannot list them): installation and
// installation_repositories. ok is false for any other event.
func (h *Handler) alwaysSent(ctx context.Context, d delivery) (res response, ok bool, err error) {
	switch d.event {
	case "installation":
		res, err = h.onInstallation(ctx, d)
	case "installation_repositories":
		res, err = h.onInstallationRepositories(ctx, d)
	default:
		return response{}, false, nil
	}
	return res, true, err
}

// malformed is the response to a verified body that is not JSON, or not
// the shape of its event.
func malformed(d delivery, err error) response {
	return done(http.StatusBadRequest, "malformed %s payload: %v", d.event, err)
}

// isBot reports whether a sender is a bot: GitHub marks apps' users with
// type Bot and a login ending in [bot].
func isBot(login, typ string) bool {
	return strings.EqualFold(typ, "Bot") || strings.HasSuffix(strings.ToLower(login), "[bot]")
}

// reply enqueues a comment answering the delivery; one per delivery however
// often it is redelivered.
func (h *Handler) reply(ctx context.Context, d delivery, issue tasks.Issue, body string) error {
	_, err := h.queue.EnqueueReply(ctx, tasks.Reply{Issue: issue, DeliveryID: d.id, Body: body})
	return err
}

// enqueued maps an enqueue result to the response, replying on replyTo
// when another job is active.
func (h *Handler) enqueued(ctx context.Context, d delivery, replyTo tasks.Issue, res jobs.EnqueueResult, what string) (response, error) {
	switch res.Outcome {
	case jobs.Enqueued:
		return done(http.StatusAccepted, "%s enqueued", what), nil
	case jobs.Duplicate:
		return done(http.StatusOK, "duplicate delivery"), nil
	case jobs.Replayed:
		return replayed(d, res.FirstDelivery), nil
	}
	if res.Outcome == jobs.Queued {
		msg := "Patchwright is still finishing the attempt running on this issue; this retry is queued and starts as soon as that attempt ends (one attempt per issue at a time). Comment `/agent stop` to cancel both."
		if err := h.reply(ctx, d, replyTo, msg); err != nil {
			return response{}, err
		}
		return done(http.StatusAccepted, "%s queued behind task %s", what, res.ActiveTaskID), nil
	}
	msg := "Patchwright is already working on this issue; this request was not started. Comment `/agent stop` to cancel the running attempt, then try again."
	if res.Waiting != "" {
		msg = "Patchwright is already working on this issue and another retry is queued behind the running attempt; this request was not started. Comment `/agent stop` to cancel both, then try again."
	}
	if err := h.reply(ctx, d, replyTo, msg); err != nil {
		return response{}, err
	}
	return done(http.StatusOK, "busy: task %s is active; %s not started", res.ActiveTaskID, what), nil
}
