package jobs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hibiken/asynq"
)

// An agent job is enqueued in the same script that takes its issue's lock
// (queue.go, enqueueScript), so a delivery that starts a job costs one
// round trip to Redis rather than two, and nothing can fail between the
// lock and the task. That script writes the task as asynq's client would:
// the hash asynq:{queue}:t:<id> with the encoded task message, its state
// and pending_since, and the ID pushed on asynq:{queue}:pending; the queue
// is put in asynq:queues once before (Queue.publish), as asynq's client
// does, since that key is in another hash slot on a cluster. TestAgentTaskAsAsynqStoresIt holds the bytes to what
// asynq's own client stores, so an asynq upgrade that changes them fails
// there, not in production.

// asynq's key names (its internal/base) for a queue.
func asynqTaskKey(queue, id string) string { return "asynq:{" + queue + "}:t:" + id }
func asynqPendingKey(queue string) string  { return "asynq:{" + queue + "}:pending" }

const asynqQueues = "asynq:queues"

// message is the part of asynq's TaskMessage (its
// internal/proto/asynq.proto) the queue writes.
type message struct {
	typ                string
	payload            []byte
	id, queue          string
	retry              int
	timeout, retention time.Duration
	headers            map[string]string
}

// taskMessage encodes m as asynq's TaskMessage for a task enqueued now with a timeout and no deadline, as asynq's client
// does: field numbers 1 type, 2 payload, 3 id, 4 queue, 5 retry,
// 8 timeout (seconds), 12 retention (seconds), 15 headers (a map: one
// entry message per key, key 1 and value 2), in the protocol buffers
// wire format, zero values left out. The fields are written in field
// order, as the protobuf library writes them; the entries in key order
// (the library's order is unspecified: agent tasks carry one header).
func taskMessage(m message) []byte {
	b := make([]byte, 0, len(m.typ)+len(m.payload)+len(m.id)+len(m.queue)+32)
	b = appendBytes(b, 1, []byte(m.typ))
	b = appendBytes(b, 2, m.payload)
	b = appendBytes(b, 3, []byte(m.id))
	b = appendBytes(b, 4, []byte(m.queue))
	b = appendVarint(b, 5, uint64(m.retry))
	b = appendVarint(b, 8, uint64(m.timeout/time.Second))
	b = appendVarint(b, 12, uint64(m.retention/time.Second))
	for _, k := range slices.Sorted(maps.Keys(m.headers)) {
		entry := appendBytes(appendBytes(nil, 1, []byte(k)), 2, []byte(m.headers[k]))
		b = binary.AppendUvarint(b, 15<<3|2)
		b = binary.AppendUvarint(b, uint64(len(entry)))
		b = append(b, entry...)
	}
	return b
}

// appendBytes appends a length-delimited field (wire type 2), unless empty.
func appendBytes(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendVarint appends a varint field (wire type 0), unless zero. Only
// non-negative values are written here.
func appendVarint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(field)<<3)
	return binary.AppendUvarint(b, v)
}

// enqueueOnce enqueues task, whose ID is its delivery's: a redelivery
// finds the ID taken and is a Duplicate. what names the task in an error.
func (q *Queue) enqueueOnce(ctx context.Context, task *asynq.Task, what string) (EnqueueResult, error) {
	_, err := q.client.EnqueueContext(ctx, task)
	switch {
	case err == nil:
		return EnqueueResult{Outcome: Enqueued}, nil
	case errors.Is(err, asynq.ErrTaskIDConflict):
		return EnqueueResult{Outcome: Duplicate}, nil
	}
	return EnqueueResult{}, fmt.Errorf("enqueue %s: %w", what, err)
}
