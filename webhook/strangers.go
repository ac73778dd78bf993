package webhook

import (
	"context"
	"net/http"

	"github.com/patchwright/patchwright/jobs/tasks"
)

// stranger is a delivery from a person without write access, refused.
type stranger struct {
	d     delivery
	issue tasks.Issue // where they asked
	// commentID is their comment, which a later refusal reacts to; 0 for
	// a label, whose later refusals react to the issue.
	commentID int64
}

// refuseStranger answers a person without write access. Anyone can
// comment on a public repository, so what they can make the app post is
// bounded: an issue gives such people one reply (msg) between them, and
// every later refusal there is a reaction, which GitHub keeps once per
// content however often it is added. Nothing else is ever enqueued.
func (h *Handler) refuseStranger(ctx context.Context, s stranger, msg, result string) (response, error) {
	first, err := h.queue.ClaimStrangerReply(ctx, s.issue, s.d.id)
	if err != nil {
		return response{}, err
	}
	if first {
		if err := h.reply(ctx, s.d, s.issue, msg); err != nil {
			return response{}, err
		}
		return done(http.StatusOK, "%s", result), nil
	}
	_, err = h.queue.EnqueueReply(ctx, tasks.Reply{Issue: s.issue, DeliveryID: s.d.id, Reaction: tasks.ReactionRefused, CommentID: s.commentID})
	if err != nil {
		return response{}, err
	}
	return done(http.StatusOK, "%s (reaction only: the issue had its reply to people without write access)", result), nil
}
