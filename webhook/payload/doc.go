package payload

import "fmt"

// A delivery's body is read twice over: for its identity (what it means,
// for the replay check) and for the fields its handler decodes. Scan picks
// both in one pass; scanning the body was most of the receiver's own CPU,
// and doing it twice was half of that.

// spec is what one scan of an event's body picks: the parser's fields and
// the identity's, in one trie (a path both need is picked once).
type spec struct {
	paths    *paths
	decode   []int // the parser's fields, as indexes into paths.names
	identity []int // the identity's fields, likewise
	required []int // positions in identity that must be present
}

func newSpec(decode, identity []string, required []int) *spec {
	s := &spec{required: required}
	var names []string
	index := func(name string) int {
		for i, n := range names {
			if n == name {
				return i
			}
		}
		names = append(names, name)
		return len(names) - 1
	}
	for _, n := range decode {
		s.decode = append(s.decode, index(n))
	}
	for _, n := range identity {
		s.identity = append(s.identity, index(n))
	}
	s.paths = newPaths(names...)
	return s
}

// Doc is a body scanned once for an event: validated as JSON, with the
// fields its parser and its identity read picked out raw. It keeps slices
// of the body, so the body must outlive it; the values its methods return
// are copies.
type Doc struct {
	event string
	spec  *spec // nil for an event with neither a parser nor an identity
	raw   [][]byte
	err   error
}

// Scan validates body and picks what event's parser and identity read.
// An event with neither is only validated.
func Scan(event string, body []byte) *Doc {
	d := &Doc{event: event, spec: specs[event]}
	if d.spec == nil {
		d.err = scan(body, nil, nil)
		return d
	}
	d.raw, d.err = d.spec.paths.pick(body)
	return d
}

// Event is the event the body was scanned for.
func (d *Doc) Event() string { return d.event }

// Err is the scan's error: the body is not JSON, or not the shape of its
// event (a non-object on the way to a picked field).
func (d *Doc) Err() error { return d.err }

// decoder reads the parser's fields, after checking the scan was for want.
func (d *Doc) decoder(want string) (*decoder, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.event != want || d.spec == nil {
		return nil, fmt.Errorf("payload: a %s body read as %s", d.event, want)
	}
	return &decoder{names: d.spec.paths.names, raw: d.raw, order: d.spec.decode}, nil
}

// Identity returns the action and the identifying fields of the body,
// verbatim (see Identity).
func (d *Doc) Identity() (action string, fields []string, ok bool, err error) {
	if d.spec == nil || d.spec.identity == nil {
		return "", nil, false, nil
	}
	if d.err != nil {
		return "", nil, false, d.err
	}
	for _, i := range d.spec.required {
		if r := d.raw[d.spec.identity[i]]; len(r) == 0 || string(r) == "null" {
			return "", nil, false, nil
		}
	}
	fields = make([]string, len(d.spec.identity))
	for i, j := range d.spec.identity {
		fields[i] = string(d.raw[j])
	}
	// The identity's first field is the action.
	if r := d.raw[d.spec.identity[0]]; len(r) > 1 && r[0] == '"' {
		action = unquote(r)
	}
	return action, fields, true, nil
}
