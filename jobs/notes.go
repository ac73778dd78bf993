package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/redis/go-redis/v9"
)

// Note is a writer's `/agent note` for the job running on an issue: a list
// per issue in Redis, which the running job's loop drains between steps.
type Note struct {
	// DeliveryID is the comment's delivery: a redelivery adds nothing.
	DeliveryID string `json:"delivery_id"`
	Author     string `json:"author"`
	Text       string `json:"text"`
}

// MaxNotes bounds the notes waiting for one issue's job; past it a note is
// refused (the loop takes them every step, so a full list means it is
// not reading them).
const MaxNotes = 20

func notesKey(i tasks.Issue) string { return KeyPrefix + "notes:" + issueKey(i) }
func noteSeenKey(id string) string  { return KeyPrefix + "note-seen:" + id }

// addNoteScript adds a note while the issue's job lock is held, once per
// delivery. KEYS: lock, notes, seen; ARGV: note JSON, max, ttl seconds.
// It returns the holding task's ID ("" when nothing runs), or "full",
// or "dup".
var addNoteScript = redis.NewScript(`
local holder = redis.call('GET', KEYS[1])
if not holder then return '' end
if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[3]) == false then return 'dup' end
if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[2]) then return 'full' end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return holder
`)

// NoteOutcome is what AddNote came to.
type NoteOutcome int

// Outcomes of AddNote.
const (
	// NoteAdded: the running job will read it at its next step.
	NoteAdded NoteOutcome = iota + 1
	// NoteIdle: no job runs for the issue; nothing was stored.
	NoteIdle
	// NoteDuplicate: this delivery's note was added before.
	NoteDuplicate
	// NoteFull: MaxNotes notes are waiting already.
	NoteFull
)

// AddNote stores n for the job active on issue, if one is.
func (q *Queue) AddNote(ctx context.Context, issue tasks.Issue, n Note) (NoteOutcome, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return 0, err
	}
	ttl := int(lockTTL.Seconds())
	res, err := addNoteScript.Run(ctx, q.rdb, []string{lockKey(issue), notesKey(issue), noteSeenKey(n.DeliveryID)}, b, MaxNotes, ttl).Text()
	if err != nil {
		return 0, fmt.Errorf("add note on %s: %w", issue, err)
	}
	switch res {
	case "":
		return NoteIdle, nil
	case "dup":
		return NoteDuplicate, nil
	case "full":
		return NoteFull, nil
	}
	return NoteAdded, nil
}

// TakeNotes removes and returns the notes waiting for issue's job, oldest
// first.
func (q *Queue) TakeNotes(ctx context.Context, issue tasks.Issue) ([]Note, error) {
	raw, err := q.rdb.LPopCount(ctx, notesKey(issue), MaxNotes).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("take notes of %s: %w", issue, err)
	}
	notes := make([]Note, 0, len(raw))
	for _, r := range raw {
		var n Note
		if err := json.Unmarshal([]byte(r), &n); err != nil {
			return notes, fmt.Errorf("decode a note of %s: %w", issue, err)
		}
		notes = append(notes, n)
	}
	return notes, nil
}
