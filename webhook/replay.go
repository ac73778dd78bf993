package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/webhook/payload"
)

// Replays. The delivery ID dedupes GitHub's own redeliveries (GitHub keeps
// the X-GitHub-Delivery GUID of the event on every redelivery of it), but
// anyone who captured a signed body can send it again under a new ID. So
// each delivery that can act also claims its meaning: a key made of the
// event and the fields that tell this occurrence apart (payload.Identity:
// the object's ID and the times it changed), held with the ID of the
// delivery that claimed it. The same meaning under another ID is a replay,
// answered 200 "duplicate"; under the same ID it is a redelivery, and goes
// on to the delivery-ID dedupe. A delivery that fails (503) gives its claim
// back, so only a meaning that was answered counts.

// Meanings holds the claims; *jobs.Queue satisfies it.
type Meanings interface {
	// ClaimMeaning claims key for delivery id and returns the delivery ID
	// that holds it: id when the claim is new or already id's.
	ClaimMeaning(ctx context.Context, key, id string) (holder string, err error)
	// ReleaseMeaning gives key back if id holds it.
	ReleaseMeaning(ctx context.Context, key, id string) error
}

// acting are the actions, per event, that can start, stop or answer
// something; other actions are answered "ignored" whatever their meaning
// and claim nothing.
var acting = map[string][]string{
	"issues":                    {"labeled", "unlabeled", "closed", "assigned", "unassigned"},
	"issue_comment":             {"created"},
	"pull_request":              {"closed"},
	"pull_request_review":       {"submitted"},
	"installation":              {"deleted", "suspend"},
	"installation_repositories": {"removed"},
}

// meaningKey is the delivery's meaning as a Redis key, or "" when it has
// none (an event or action that cannot act, a body that cannot be told
// apart from others, or a malformed one, which dispatch answers 400).
func meaningKey(event string, body []byte) string {
	key, _ := meaningOf(payload.Scan(event, body))
	return key
}

// meaningOf is meaningKey of a scanned body, and the body's action.
func meaningOf(doc *payload.Doc) (key, action string) {
	event := doc.Event()
	action, fields, ok, err := doc.Identity()
	if err != nil || !ok || !actsOn(event, action) {
		return "", action
	}
	h := sha256.New()
	h.Write([]byte(event))
	for _, f := range fields {
		h.Write([]byte{0})
		h.Write([]byte(f))
	}
	return jobs.KeyPrefix + "meaning:" + hex.EncodeToString(h.Sum(nil)), action
}

func actsOn(event, action string) bool {
	for _, a := range acting[event] {
		if a == action {
			return true
		}
	}
	return false
}

// claimMeaning claims the delivery's meaning. dup is the ID of the
// delivery that holds it when that is another one; key is "" when nothing
// was claimed. The claim of an issues.labeled delivery is left to the
// solve enqueue, which makes it in the same round trip (the usual delivery
// that starts a job then costs one): key is returned and d.meaning set,
// and any other effect of the delivery claims first (claimPending).
func (h *Handler) claimMeaning(ctx context.Context, d *delivery) (key, dup string, err error) {
	if h.cfg.Meanings == nil {
		return "", "", nil
	}
	key, action := meaningOf(d.doc)
	if key == "" {
		return "", "", nil
	}
	if h.claiming != nil && d.event == "issues" && (action == "labeled" || action == "assigned") {
		d.meaning = key
		return key, "", nil
	}
	holder, err := h.cfg.Meanings.ClaimMeaning(ctx, key, d.id)
	if err != nil {
		return "", "", err
	}
	if holder != d.id {
		return "", holder, nil
	}
	return key, "", nil
}

// claimingQueue claims a delivery's meaning in the round trip that
// enqueues its solve; *jobs.Queue is one.
type claimingQueue interface {
	EnqueueSolveClaiming(ctx context.Context, p tasks.SolveIssue, meaning string) (jobs.EnqueueResult, error)
}

// claimPending makes the claim claimMeaning left to the enqueue, before an
// effect other than that enqueue; dup as claimMeaning's.
func (h *Handler) claimPending(ctx context.Context, d *delivery) (dup string, err error) {
	if d.meaning == "" {
		return "", nil
	}
	holder, err := h.cfg.Meanings.ClaimMeaning(ctx, d.meaning, d.id)
	if err != nil {
		return "", err
	}
	d.meaning = ""
	if holder != d.id {
		return holder, nil
	}
	return "", nil
}

// enqueueSolve enqueues p, claiming the delivery's meaning in the same
// round trip when claimMeaning left it pending.
func (h *Handler) enqueueSolve(ctx context.Context, d *delivery, p tasks.SolveIssue) (jobs.EnqueueResult, error) {
	if d.meaning == "" {
		return h.queue.EnqueueSolve(ctx, p)
	}
	key := d.meaning
	d.meaning = ""
	return h.claiming.EnqueueSolveClaiming(ctx, p, key)
}

// replayed answers a delivery whose meaning another delivery holds.
func replayed(d delivery, first string) response {
	d.log.Warn("replayed delivery refused", "first_delivery", first)
	return done(http.StatusOK, "duplicate delivery: the same event was delivered as %s", first)
}

// unclaimMeaning gives back the claim of a delivery that failed, with a
// context of its own: the request's may be what failed.
func (h *Handler) unclaimMeaning(ctx context.Context, d delivery, key string) {
	if key == "" {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := h.cfg.Meanings.ReleaseMeaning(rctx, key, d.id); err != nil {
		d.log.Warn("release the delivery's meaning", logkey.Err, err)
	}
}
