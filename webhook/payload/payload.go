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
// Why a scanner of our own rather than a library (docs/design.md §3 asks for one
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
	Action string
	Label  string // label.name: the label added or removed
	// Assignee is assignee.login: the user assigned or unassigned.
	Assignee     string
	Issue        Issue
	Repo         Repo
	Sender       User
	Installation int64 // installation.id; 0 for a repository webhook
}

// IssueComment is an issue_comment event, on an issue or a pull request.
type IssueComment struct {
	Action       string
	Body         string // comment.body
	CommentID    int64  // comment.id
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
	// Title and Body are the text as it was when the event was sent.
	Title, Body string
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

var issuesPaths = append([]string{"action", "label.name", "issue.number", "issue.title", "issue.body", "assignee.login"}, whereWho...)

// ParseIssues decodes an issues event.
func ParseIssues(body []byte) (Issues, error) { return Scan("issues", body).Issues() }

// Issues decodes a scanned issues event.
func (doc *Doc) Issues() (Issues, error) {
	var e Issues
	d, err := doc.decoder("issues")
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.str(&e.Label)
	d.integer(&e.Issue.Number)
	d.str(&e.Issue.Title)
	d.str(&e.Issue.Body)
	d.str(&e.Assignee)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

var commentPaths = append([]string{
	"action", "comment.body", "comment.id",
	"issue.number", "issue.user.login", "issue.pull_request", "issue.labels", "issue.title", "issue.body",
}, whereWho...)

// ParseIssueComment decodes an issue_comment event.
func ParseIssueComment(body []byte) (IssueComment, error) {
	return Scan("issue_comment", body).IssueComment()
}

// IssueComment decodes a scanned issue_comment event.
func (doc *Doc) IssueComment() (IssueComment, error) {
	var e IssueComment
	d, err := doc.decoder("issue_comment")
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.str(&e.Body)
	d.int64(&e.CommentID)
	d.integer(&e.Issue.Number)
	d.str(&e.Issue.Author)
	e.Issue.PullRequest = d.object()
	d.labels(&e.Issue.Labels)
	d.str(&e.Issue.Title)
	d.str(&e.Issue.Body)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

// PullRequest is the pull request of a pull_request or pull_request_review
// event.
type PullRequest struct {
	Number  int
	Author  string // user.login
	State   string
	Merged  bool
	Body    string
	HeadRef string
	HeadSHA string
	// HeadRepo is head.repo.full_name: the fork's name for a pull request
	// from a fork, "" when the fork is gone.
	HeadRepo string
}

// PullRequestEvent is a pull_request event.
type PullRequestEvent struct {
	Action       string
	PullRequest  PullRequest
	Repo         Repo
	FullName     string // repository.full_name
	Sender       User
	Installation int64
}

var pullPaths = append([]string{
	"action", "pull_request.number", "pull_request.user.login", "pull_request.state", "pull_request.merged",
	"pull_request.body", "pull_request.head.ref", "pull_request.head.sha", "pull_request.head.repo.full_name",
	"repository.full_name",
}, whereWho...)

// ParsePullRequest decodes a pull_request event.
func ParsePullRequest(body []byte) (PullRequestEvent, error) {
	return Scan("pull_request", body).PullRequest()
}

// PullRequest decodes a scanned pull_request event.
func (doc *Doc) PullRequest() (PullRequestEvent, error) {
	var e PullRequestEvent
	d, err := doc.decoder("pull_request")
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.pull(&e.PullRequest)
	d.str(&e.FullName)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

func (d *decoder) pull(p *PullRequest) {
	d.integer(&p.Number)
	d.str(&p.Author)
	d.str(&p.State)
	d.boolean(&p.Merged)
	d.str(&p.Body)
	d.str(&p.HeadRef)
	d.str(&p.HeadSHA)
	d.str(&p.HeadRepo)
}

// Review is a pull-request review.
type Review struct {
	State string // approved, changes_requested, commented (lower case in webhooks)
	Body  string
}

// PullRequestReview is a pull_request_review event.
type PullRequestReview struct {
	Action       string
	Review       Review
	PullRequest  PullRequest
	Repo         Repo
	FullName     string
	Sender       User
	Installation int64
}

var reviewPaths = append([]string{
	"action", "review.state", "review.body",
	"pull_request.number", "pull_request.user.login", "pull_request.state", "pull_request.merged",
	"pull_request.body", "pull_request.head.ref", "pull_request.head.sha", "pull_request.head.repo.full_name",
	"repository.full_name",
}, whereWho...)

// ParsePullRequestReview decodes a pull_request_review event.
func ParsePullRequestReview(body []byte) (PullRequestReview, error) {
	return Scan("pull_request_review", body).PullRequestReview()
}

// PullRequestReview decodes a scanned pull_request_review event.
func (doc *Doc) PullRequestReview() (PullRequestReview, error) {
	var e PullRequestReview
	d, err := doc.decoder("pull_request_review")
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.str(&e.Review.State)
	d.str(&e.Review.Body)
	d.pull(&e.PullRequest)
	d.str(&e.FullName)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

// Installation is an installation or installation_repositories event:
// the account the app is installed on and the repositories concerned
// (repositories for installation, repositories_removed for
// installation_repositories), as "owner/name".
type Installation struct {
	Action       string
	Installation int64
	Account      string // installation.account.login
	Repositories []string
	Sender       User
}

var installationPaths = []string{"action", "installation.id", "installation.account.login", "repositories", "sender.login", "sender.type"}
var installationReposPaths = []string{"action", "installation.id", "installation.account.login", "repositories_removed", "sender.login", "sender.type"}

// parsers are the fields each event's parser decodes, in its order.
var parsers = map[string][]string{
	"issues":                    issuesPaths,
	"issue_comment":             commentPaths,
	"pull_request":              pullPaths,
	"pull_request_review":       reviewPaths,
	"installation":              installationPaths,
	"installation_repositories": installationReposPaths,
	"check_suite":               checkSuitePaths,
	"check_run":                 checkRunPaths,
	"workflow_run":              workflowRunPaths,
	"push":                      pushPaths,
}

// specs are the scans of the events with a parser or an identity.
var specs = func() map[string]*spec {
	m := map[string]*spec{}
	for event, decode := range parsers {
		id := identities[event]
		m[event] = newSpec(decode, id.paths, id.required)
	}
	for event, id := range identities {
		if m[event] == nil {
			m[event] = newSpec(nil, id.paths, id.required)
		}
	}
	return m
}()

// ParseInstallation decodes an installation event.
func ParseInstallation(body []byte) (Installation, error) {
	return Scan("installation", body).Installation()
}

// Installation decodes a scanned installation or installation_repositories
// event.
func (doc *Doc) Installation() (Installation, error) {
	var e Installation
	want := "installation"
	if doc.event == "installation_repositories" {
		want = doc.event
	}
	d, err := doc.decoder(want)
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.int64(&e.Installation)
	d.str(&e.Account)
	d.repos(&e.Repositories)
	d.str(&e.Sender.Login)
	d.str(&e.Sender.Type)
	return e, d.err
}

// ParseInstallationRepositories decodes an installation_repositories
// event; Repositories are those removed.
func ParseInstallationRepositories(body []byte) (Installation, error) {
	return Scan("installation_repositories", body).Installation()
}

// repos decodes an array of repository objects into their full names.
func (d *decoder) repos(dst *[]string) {
	r := d.next()
	if r == nil {
		return
	}
	var rs []struct {
		FullName string `json:"full_name"`
	}
	if err := json.Unmarshal(r, &rs); err != nil {
		d.fail("an array of repositories", r)
		return
	}
	for _, x := range rs {
		*dst = append(*dst, x.FullName)
	}
}

func (d *decoder) boolean(dst *bool) {
	r := d.next()
	switch string(r) {
	case "":
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		d.fail("a boolean", r)
	}
}

// decoder turns picked raw values into Go values, one a call in the order
// of the parser's paths, keeping the first error.
type decoder struct {
	names []string
	raw   [][]byte
	order []int // the parser's paths, as indexes into names and raw
	i     int
	err   error
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
	r := d.raw[d.order[d.i]]
	d.i++
	if string(r) == "null" {
		return nil
	}
	return r
}

// fail records that the value just read is not what was wanted.
func (d *decoder) fail(want string, raw []byte) {
	if d.err == nil {
		d.err = fmt.Errorf("%s is %.20s, not %s", d.names[d.order[d.i-1]], raw, want)
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
