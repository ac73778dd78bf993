// Package payload decodes the few fields Patchwright reads from GitHub's
// issues and issue_comment webhook payloads. It validates the whole body as
// JSON in the same single pass, but decodes only the picked fields: a
// payload is 10-30 KiB of repository and user objects that the receiver
// never reads, and decoding all of it into go-github's event structs was
// the largest cost of a delivery.
//
// A field that is absent or null decodes to its zero value, as it would in
// go-github's structs; a field of the wrong JSON type is an error.
//
// Why a scanner of our own rather than a library (DESIGN §3 asks for one
// first), as measured on a real issues.labeled delivery: encoding/json into
// go-github's event takes 74 µs and json.Valid alone 27 µs; gjson's
// ValidBytes plus GetManyBytes takes 22 µs, and its validator recurses
// without a depth limit, so a signed body of 25 MiB of '[' ends the process
// with a fatal stack overflow; jsonparser does not validate. This scanner
// takes 6 µs and stops at encoding/json's depth limit.
package payload

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Issues is an issues event.
type Issues struct {
	Action       string
	Label        string // label.name: the label added or removed
	Issue        Issue
	Repo         Repo
	Sender       User
	Installation int64 // installation.id; 0 for a repository webhook
}

// IssueComment is an issue_comment event, on an issue or a pull request.
type IssueComment struct {
	Action       string
	Body         string // comment.body
	Issue        Issue
	Repo         Repo
	Sender       User
	Installation int64
}

// Issue is the issue or pull request an event is about. Labels and
// PullRequest are read for issue_comment events only.
type Issue struct {
	Number      int
	Author      string // user.login
	PullRequest bool   // the "issue" is a pull request
	Labels      []string
}

// Repo names a repository.
type Repo struct {
	Owner string // owner.login
	Name  string
}

// User is an event's sender.
type User struct {
	Login string
	Type  string // "User", "Bot" or "Organization"
}

// whereWho are the paths every event here ends with: its repository, its
// sender and the app installation it was sent to. decoder.whereWho reads
// them.
var whereWho = []string{
	"repository.owner.login", "repository.name",
	"sender.login", "sender.type", "installation.id",
}

var issuesPaths = newPaths(append([]string{"action", "label.name", "issue.number"}, whereWho...)...)

// ParseIssues decodes an issues event.
func ParseIssues(body []byte) (Issues, error) {
	var e Issues
	d, err := newDecoder(issuesPaths, body)
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.str(&e.Label)
	d.integer(&e.Issue.Number)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

var commentPaths = newPaths(append([]string{
	"action", "comment.body",
	"issue.number", "issue.user.login", "issue.pull_request", "issue.labels",
}, whereWho...)...)

// ParseIssueComment decodes an issue_comment event.
func ParseIssueComment(body []byte) (IssueComment, error) {
	var e IssueComment
	d, err := newDecoder(commentPaths, body)
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.str(&e.Body)
	d.integer(&e.Issue.Number)
	d.str(&e.Issue.Author)
	e.Issue.PullRequest = d.object()
	d.labels(&e.Issue.Labels)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

// decoder turns picked raw values into Go values, one a call in the order
// of the paths, keeping the first error.
type decoder struct {
	names []string
	raw   [][]byte
	i     int
	err   error
}

func newDecoder(p *paths, body []byte) (*decoder, error) {
	raw, err := p.pick(body)
	if err != nil {
		return nil, err
	}
	return &decoder{names: p.names, raw: raw}, nil
}

func (d *decoder) whereWho(r *Repo, u *User, inst *int64) {
	d.str(&r.Owner)
	d.str(&r.Name)
	d.str(&u.Login)
	d.str(&u.Type)
	d.int64(inst)
}

// next returns the next raw value, or nil for an absent or null one.
func (d *decoder) next() []byte {
	r := d.raw[d.i]
	d.i++
	if string(r) == "null" {
		return nil
	}
	return r
}

// fail records that the value just read is not what was wanted.
func (d *decoder) fail(want string, raw []byte) {
	if d.err == nil {
		d.err = fmt.Errorf("%s is %.20s, not %s", d.names[d.i-1], raw, want)
	}
}

func (d *decoder) str(dst *string) {
	r := d.next()
	if r == nil {
		return
	}
	if r[0] != '"' {
		d.fail("a string", r)
		return
	}
	*dst = unquote(r)
}

// unquote decodes a scanned string; plain ones, the usual kind, without
// encoding/json.
func unquote(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	plain := utf8.Valid(inner)
	for _, b := range inner {
		plain = plain && b != '\\'
	}
	if plain {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // raw was scanned as a valid string
	return s
}

func (d *decoder) int64(dst *int64) {
	r := d.next()
	if r == nil {
		return
	}
	n, err := strconv.ParseInt(string(r), 10, 64)
	if err != nil {
		d.fail("an integer", r)
		return
	}
	*dst = n
}

func (d *decoder) integer(dst *int) {
	var n int64
	d.int64(&n)
	*dst = int(n)
}

// object reports whether the value is present, not null, and an object.
func (d *decoder) object() bool {
	r := d.next()
	if r == nil {
		return false
	}
	if r[0] != '{' {
		d.fail("an object", r)
		return false
	}
	return true
}

// labels decodes an array of label objects into their names.
func (d *decoder) labels(dst *[]string) {
	r := d.next()
	if r == nil {
		return
	}
	var ls []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(r, &ls); err != nil {
		d.fail("an array of labels", r)
		return
	}
	for _, l := range ls {
		*dst = append(*dst, l.Name)
	}
}
