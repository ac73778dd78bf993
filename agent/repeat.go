package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strconv"
	"strings"
)

// repeatDetector notices a model that is going round in circles. Two rules:
// the same call (tool name and normalised arguments) several times in a
// row, whatever it returned; or the same call with the same result several
// times within a window of recent calls. The second rule includes the
// result so that an edit-test-edit-test cycle, where the test output
// changes, is not mistaken for a loop.
type repeatDetector struct {
	inARow      int // same call this many times in a row stops; 0 disables
	inWindow    int // same call and result this many times in the window stops; 0 disables
	window      int
	lastCall    string
	streak      int
	recent      []string // call+result signatures, oldest first
	description string
}

// observe records one call and reports whether a rule was hit.
func (d *repeatDetector) observe(name, args, result string) bool {
	call := name + "\x00" + normaliseArgs(args)
	if call == d.lastCall {
		d.streak++
	} else {
		d.lastCall, d.streak = call, 1
	}
	if d.inARow > 0 && d.streak >= d.inARow {
		d.description = describeCall(name, args) + " repeated " + strconv.Itoa(d.streak) + " times in a row"
		return true
	}
	sum := sha256.Sum256([]byte(result))
	sig := call + "\x00" + string(sum[:])
	d.recent = append(d.recent, sig)
	if len(d.recent) > d.window {
		d.recent = d.recent[len(d.recent)-d.window:]
	}
	n := 0
	for _, s := range d.recent {
		if s == sig {
			n++
		}
	}
	if d.inWindow > 0 && n >= d.inWindow {
		d.description = describeCall(name, args) + " returned the same result " + strconv.Itoa(n) + " times in the last " + strconv.Itoa(len(d.recent)) + " calls"
		return true
	}
	return false
}

// normaliseArgs makes equal arguments compare equal however the model
// spaced or ordered them: valid JSON is re-encoded (object keys sorted),
// anything else is compared as trimmed text.
func normaliseArgs(args string) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return strings.TrimSpace(args)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return strings.TrimSpace(args)
	}
	return strings.TrimSpace(b.String())
}

func describeCall(name, args string) string {
	a := normaliseArgs(args)
	if len(a) > 120 {
		a = strings.ToValidUTF8(a[:120], "") + "…"
	}
	return name + " " + a
}
