package jobs

import (
	"context"
	"fmt"
	"testing"
)

// Notes are kept only while a job holds the issue, once per delivery, up
// to MaxNotes, and taken oldest first, once.
func TestNotes(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(testRedis(t))
	add := func(id string, want NoteOutcome) {
		t.Helper()
		got, err := q.AddNote(ctx, issue, Note{DeliveryID: id, Author: "maintainer", Text: "note " + id})
		if err != nil || got != want {
			t.Fatalf("AddNote(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	add("idle", NoteIdle)
	mustOutcome(t, q.EnqueueSolve, solve("a"), Enqueued)
	add("n0", NoteAdded)
	add("n0", NoteDuplicate)
	for i := 1; i < MaxNotes; i++ {
		add(fmt.Sprintf("n%d", i), NoteAdded)
	}
	add("one-too-many", NoteFull)
	notes, err := q.TakeNotes(ctx, issue)
	if err != nil || len(notes) != MaxNotes || notes[0].Text != "note n0" || notes[MaxNotes-1].Text != fmt.Sprintf("note n%d", MaxNotes-1) {
		t.Fatalf("TakeNotes = %d notes (%v), want %d, oldest first", len(notes), err, MaxNotes)
	}
	if again, err := q.TakeNotes(ctx, issue); err != nil || len(again) != 0 {
		t.Errorf("second TakeNotes = %v, %v; want none", again, err)
	}
	if err := q.Release(ctx, issue, "a"); err != nil {
		t.Fatal(err)
	}
	add("after", NoteIdle)
}
