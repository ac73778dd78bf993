package payload

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// maxDepth is encoding/json's nesting limit, so a document is valid here
// exactly when json.Valid says so. It also bounds the scanner's recursion:
// a 25 MiB body of '[' must not grow the stack without limit.
const maxDepth = 10000

// paths is a set of dotted paths to pick out of a document, as a trie of
// object keys. The root is the document itself.
type paths struct {
	root  *node
	names []string // the dotted paths, leaf i being names[i]
}

type node struct {
	key      string
	children []*node
	leaf     int   // index of the picked value, or -1 for a node on the way
	leaves   []int // every leaf at or below this node
}

// newPaths builds the trie; leaf i is names[i]. A path may not lead through
// another: "a" and "a.b" together are a programming error.
func newPaths(names ...string) *paths {
	p := &paths{root: &node{leaf: -1}, names: names}
	for i, name := range names {
		n := p.root
		n.leaves = append(n.leaves, i)
		for _, key := range strings.Split(name, ".") {
			c := n.child(key)
			if c == nil {
				c = &node{key: key, leaf: -1}
				n.children = append(n.children, c)
			}
			if n.leaf >= 0 {
				panic("payload: path " + name + " leads through a picked value")
			}
			n = c
			n.leaves = append(n.leaves, i)
		}
		if len(n.children) > 0 || n.leaf >= 0 {
			panic("payload: path " + name + " is picked twice or leads further")
		}
		n.leaf = i
	}
	return p
}

func (n *node) child(key string) *node {
	for _, c := range n.children {
		if c.key == key {
			return c
		}
	}
	return nil
}

// pick validates doc as JSON, in one pass and without decoding what it does
// not pick, and returns the raw value at each path (nil where absent).
// Duplicate keys resolve as in encoding/json: the last one wins. A value on
// a path that is neither an object nor null is an error, as decoding into a
// struct would be.
func (p *paths) pick(doc []byte) ([][]byte, error) {
	out := make([][]byte, len(p.names))
	if err := scan(doc, p.root, out); err != nil {
		return nil, err
	}
	return out, nil
}

// scan validates doc and stores the values of the leaves below root in out.
// A nil root only validates.
func scan(doc []byte, root *node, out [][]byte) error {
	s := scanner{doc: doc, out: out}
	s.space()
	if err := s.value(root, 0); err != nil {
		return err
	}
	s.space()
	if s.pos < len(doc) {
		return s.errorf("after the top-level value")
	}
	return nil
}

// scanner is a recursive-descent JSON validator following RFC 8259, with the
// leniencies of encoding/json: invalid UTF-8 inside strings is accepted.
type scanner struct {
	doc []byte
	pos int
	out [][]byte
}

// errSyntax marks a document that is not JSON, as opposed to JSON of the
// wrong shape.
var errSyntax = errors.New("invalid JSON")

func (s *scanner) errorf(where string) error {
	if s.pos >= len(s.doc) {
		return fmt.Errorf("%w: unexpected end %s", errSyntax, where)
	}
	return fmt.Errorf("%w: unexpected %q at offset %d %s", errSyntax, s.doc[s.pos], s.pos, where)
}

func (s *scanner) space() {
	for s.pos < len(s.doc) {
		switch s.doc[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value. n is where it sits in the trie: nil when nothing
// below it is picked, so the value is only validated.
func (s *scanner) value(n *node, depth int) error {
	if s.pos >= len(s.doc) {
		return s.errorf("looking for a value")
	}
	c := s.doc[s.pos]
	if n != nil && c != '{' && c != 'n' {
		return fmt.Errorf("%s is not an object", describe(n))
	}
	switch {
	case c == '{':
		return s.object(n, depth+1)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		_, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.errorf("looking for a value")
}

func describe(n *node) string {
	if n.key == "" {
		return "the payload"
	}
	return fmt.Sprintf("%q", n.key)
}

func (s *scanner) object(n *node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested deeper than %d", errSyntax, maxDepth)
	}
	s.pos++ // '{'
	s.space()
	if s.pos < len(s.doc) && s.doc[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		if s.pos >= len(s.doc) || s.doc[s.pos] != '"' {
			return s.errorf("looking for an object key")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		s.space()
		if s.pos >= len(s.doc) || s.doc[s.pos] != ':' {
			return s.errorf("after an object key")
		}
		s.pos++
		s.space()
		if err := s.member(n, key, depth); err != nil {
			return err
		}
		s.space()
		if s.pos >= len(s.doc) {
			return s.errorf("in an object")
		}
		switch s.doc[s.pos] {
		case ',':
			s.pos++
			s.space()
		case '}':
			s.pos++
			return nil
		default:
			return s.errorf("after an object value")
		}
	}
}

// member scans the value of key in the object at trie node n.
func (s *scanner) member(n *node, rawKey []byte, depth int) error {
	var c *node
	if n != nil {
		c = n.childRaw(rawKey)
	}
	if c == nil {
		return s.value(nil, depth)
	}
	// A later duplicate key replaces everything an earlier one gave.
	for _, i := range c.leaves {
		s.out[i] = nil
	}
	if c.leaf < 0 {
		return s.value(c, depth)
	}
	start := s.pos
	if err := s.value(nil, depth); err != nil {
		return err
	}
	s.out[c.leaf] = s.doc[start:s.pos]
	return nil
}

// childRaw looks a raw key up, quotes included, unescaping it only if it
// must be.
func (n *node) childRaw(raw []byte) *node {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		for _, c := range n.children {
			if string(inner) == c.key {
				return c
			}
		}
		return nil
	}
	var key string
	_ = json.Unmarshal(raw, &key) // raw is a valid string: it was scanned
	return n.child(key)
}

func (s *scanner) array(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested deeper than %d", errSyntax, maxDepth)
	}
	s.pos++ // '['
	s.space()
	if s.pos < len(s.doc) && s.doc[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.value(nil, depth); err != nil {
			return err
		}
		s.space()
		if s.pos >= len(s.doc) {
			return s.errorf("in an array")
		}
		switch s.doc[s.pos] {
		case ',':
			s.pos++
			s.space()
		case ']':
			s.pos++
			return nil
		default:
			return s.errorf("after an array element")
		}
	}
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for b := 0x20; b < 256; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// str scans a string and returns it raw, quotes included.
func (s *scanner) str() ([]byte, error) {
	start := s.pos
	s.pos++ // '"'
	for {
		s.skipPlain()
		if s.pos >= len(s.doc) {
			return nil, s.errorf("in a string")
		}
		switch s.doc[s.pos] {
		case '"':
			s.pos++
			return s.doc[start:s.pos], nil
		case '\\':
			if err := s.escape(); err != nil {
				return nil, err
			}
		default:
			return nil, s.errorf("in a string (control character)")
		}
	}
}

// skipPlain moves past plain string bytes, eight at a time while a whole
// word is plain: strings are most of a payload's bytes.
func (s *scanner) skipPlain() {
	for s.pos+8 <= len(s.doc) && !special(binary.LittleEndian.Uint64(s.doc[s.pos:])) {
		s.pos += 8
	}
	for s.pos < len(s.doc) && plain[s.doc[s.pos]] {
		s.pos++
	}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special reports whether any byte of w is a quote, a backslash or a
// control character, with the zero-byte test of "Bit Twiddling Hacks":
// (v - ones) &^ v & highs is non-zero exactly when a byte of v is zero.
func special(w uint64) bool {
	quote := w ^ ('"' * ones)
	backslash := w ^ ('\\' * ones)
	control := (w - 0x20*ones) &^ w // high bit set where a byte is below 0x20
	return ((quote-ones)&^quote|(backslash-ones)&^backslash|control)&highs != 0
}

func (s *scanner) escape() error {
	s.pos++ // '\\'
	if s.pos >= len(s.doc) {
		return s.errorf("in an escape")
	}
	switch s.doc[s.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		s.pos++
		for range 4 {
			if s.pos >= len(s.doc) || !isHex(s.doc[s.pos]) {
				return s.errorf("in a \\u escape")
			}
			s.pos++
		}
		return nil
	}
	return s.errorf("in an escape")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	if s.doc[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.doc) && s.doc[s.pos] == '0':
		s.pos++
	case s.digits() == 0:
		return s.errorf("in a number")
	}
	if s.pos < len(s.doc) && s.doc[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return s.errorf("in a number's fraction")
		}
	}
	if s.pos < len(s.doc) && (s.doc[s.pos] == 'e' || s.doc[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.doc) && (s.doc[s.pos] == '+' || s.doc[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return s.errorf("in a number's exponent")
		}
	}
	return nil
}

func (s *scanner) digits() int {
	start := s.pos
	for s.pos < len(s.doc) && s.doc[s.pos] >= '0' && s.doc[s.pos] <= '9' {
		s.pos++
	}
	return s.pos - start
}

func (s *scanner) literal(word string) error {
	if string(s.doc[s.pos:min(len(s.doc), s.pos+len(word))]) != word {
		return s.errorf("in a literal")
	}
	s.pos += len(word)
	return nil
}
