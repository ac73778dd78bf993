// Package githubtest is a fake of the GitHub REST endpoints Patchwright
// uses, for tests: an httptest server that keeps state (tokens, issues,
// comments, reactions, pull requests, check runs, hook deliveries) so a
// test asserts outcomes ("one pull request, one status comment"), not
// calls. The real go-github and ghinstallation code talks to it: app
// endpoints check the app JWT's RS256 signature against the app's key,
// installation endpoints check a token the fake minted, and a token minted
// for some repositories is refused on others. Faults (a secondary rate
// limit, a 5xx) are injected per route.
//
// GitRemote, beside it, serves real git repositories over smart HTTP.
package githubtest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Defaults of a new Server.
const (
	AppID     = 4242
	AppSlug   = "patchwright-test"
	BotLogin  = AppSlug + "[bot]"
	BotUserID = 9000001
)

// UserID is the ID the fake gives a login: BotUserID for the bot, a
// number derived from the login otherwise.
func UserID(login string) int64 {
	if login == BotLogin {
		return BotUserID
	}
	var h int64 = 7
	for _, c := range login {
		h = (h*31 + int64(c)) % 1_000_000
	}
	return 1_000_000 + h
}

// Server is the fake. Its exported methods are safe for concurrent use.
type Server struct {
	URL string

	key *rsa.PublicKey
	// web is the web root the answers' html_url fields name
	// (https://github.com, or a GHES fake's host); logs is where a job
	// log's redirect points, the ID appended.
	web, logs string

	mu         sync.Mutex
	nextID     int64
	repos      map[string]*Repo
	perms      map[string]string // "owner/repo/user" → permission
	tokens     map[string]Token
	issues     map[string]*Issue // "owner/repo#n"
	comments   []*Comment
	reactions  []Reaction
	pulls      []*Pull
	reviews    []*Comment // review comments, Issue = pull number
	checkRuns  []*CheckRun
	deliveries []Delivery
	redeliver  []int64
	faults     []*fault
	requests   []Request
	now        func() time.Time
	// installPerms are the permissions granted to an installation; one
	// not listed has every permission.
	installPerms map[int64]map[string]string
	// prReviews are pull-request reviews (not their line comments).
	prReviews []*Review
	// teams are "owner/repo/slug" of the teams with access to a
	// repository (AddTeam), lower case.
	teams map[string]bool
	// installRepos are the repositories of each installation
	// (AddInstallation).
	installRepos map[int64][]string
	// advisories are the global advisory database (AddAdvisory).
	advisories []Advisory
	// manifests are the app manifests posted to a GHES fake's
	// registration page; appKeyPEM is the private key their conversion
	// hands out.
	manifests []*Manifest
	appKeyPEM []byte
	// strays are the requests no route took.
	strays []Request
	// attachments are issue attachments by ID (AddAttachment).
	attachments map[string]attachment
}

// Repo is a repository the fake knows.
type Repo struct {
	Owner, Name, DefaultBranch, CloneURL string
	// Heads answers the head SHA of a branch for pull requests; nil means
	// pull requests carry no head SHA.
	Heads func(branch string) string
	// NoDrafts makes the repository refuse draft pull requests, as GitHub
	// does for private repositories on GitHub Free: 422 "Validation
	// Failed" whose errors list says "Draft pull requests are not
	// supported in this repository.", as GitHub answers.
	NoDrafts bool
	// Log answers the compare and commit endpoints of a repository no
	// GitRemote holds (one that does is read from its bare repository,
	// compare.go): the commits reachable from head and not from base,
	// oldest first (base "": head alone). Compare then gives no merge
	// base and says "ahead". nil: those endpoints answer 404.
	Log func(base, head string) []GitCommit
	// Merge answers the merges endpoint: it merges commit or branch head
	// into branch base and returns the new head, "" when base already
	// holds head; conflict when git cannot merge them. GitRemote.Merge
	// does it in the remote. nil: the endpoint answers 404.
	Merge func(base, head, message string) (sha string, conflict bool, err error)
	// Installation is the installation the repository belongs to, for
	// the installation listings (0: installation 1).
	Installation int64
	// Files are files of the default branch, by path, for the contents
	// endpoint when File is nil.
	Files map[string]string
	// File answers the contents endpoint: path's bytes at ref (a branch
	// or commit; the default branch when the request names none), ok
	// false when absent. GitRemote.File reads it from the remote. nil:
	// the endpoint answers 404.
	File func(ref, path string) (data []byte, ok bool)
}

// GitCommit is a commit as the compare and commit endpoints show it.
type GitCommit struct {
	SHA, Name, Message string
	// Login is the GitHub account the commit is linked to; "" for none
	// (GitHub then answers "author": null).
	Login string
	Files []string
}

// Token is an installation token the fake minted.
type Token struct {
	Value          string
	InstallationID int64
	Repositories   []string
	Permissions    map[string]string
}

// Issue is an issue or pull request number with its text.
type Issue struct {
	Owner, Repo   string
	Number        int
	Title, Body   string
	Author, State string
}

// Comment is an issue comment (or a review comment).
type Comment struct {
	ID          int64
	Owner, Repo string
	Issue       int
	Author      string
	Body        string
	Edits       int
	Path        string
	Line        int
	Outdated    bool
	Resolved    bool // the review thread it starts is resolved (GraphQL only)
	Created     time.Time
	// Minimized is the classifier it was hidden with (GraphQL's
	// minimizeComment, "OUTDATED"…); "" while shown.
	Minimized string
	// Minimizes counts minimizeComment calls on it.
	Minimizes int
}

// Review is a pull-request review: its state and body.
type Review struct {
	ID          int64
	Owner, Repo string
	Pull        int
	Author      string
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED
	Body        string
	Submitted   time.Time
	// CommitID is the pull request's head when the review was submitted,
	// as GitHub records it.
	CommitID string
}

// Reaction is one reaction on an issue.
type Reaction struct {
	Owner, Repo string
	Issue       int
	// Comment is the comment of Issue reacted to; 0 for the issue itself.
	Comment int64
	Content string
	Author  string
}

// Pull is a pull request.
type Pull struct {
	Number              int
	Owner, Repo         string
	Title, Body         string
	Head, Base, HeadSHA string
	Draft               bool
	State               string
	Author              string
	Edits               int
	// Reviewers are the logins asked to review, in the order asked.
	Reviewers []string
	// TeamReviewers are the team slugs asked to review.
	TeamReviewers []string
	// UpdatedAt is GitHub's updated_at: set by every comment, review and
	// edit through the fake, and by Touch (a push or a label).
	UpdatedAt time.Time
	// CreatedAt, ClosedAt and Merged are GitHub's; MergePull sets the
	// last two. Commits are the pull request's commits (AddPullCommit).
	CreatedAt, ClosedAt time.Time
	Merged              bool
	Commits             []PullCommit
}

// CheckRun is a check run as last written.
type CheckRun struct {
	ID          int64
	Owner, Repo string
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	Title       string
	Summary     string
	Annotations int
	Writes      int
	// App and AppID are the app that made the run: Patchwright's own
	// (AppSlug, AppID) unless AddForeignCheckRun added it.
	App   string
	AppID int64
	// Text, AnnotationList and Log are a foreign run's output text, its
	// annotations and (for Actions) its job's log.
	Text           string
	AnnotationList []Annotation
	Log            string
}

// Annotation is one annotation of a foreign check run.
type Annotation struct {
	Path    string
	Line    int
	Level   string
	Message string
}

// AddForeignCheckRun stores a completed check run of another app on
// c.HeadSHA (the repository's own CI: App "github-actions" for Actions,
// whose job log GET .../actions/jobs/{id}/logs serves) and returns its ID.
func (s *Server) AddForeignCheckRun(c CheckRun) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c.ID, c.Status, c.Annotations = s.nextID, "completed", len(c.AnnotationList)
	if c.AppID == 0 {
		c.AppID = 15368 // GitHub Actions' app ID
	}
	s.checkRuns = append(s.checkRuns, &c)
	return c.ID
}

// Delivery is a hook delivery listed by GET /app/hook/deliveries.
type Delivery struct {
	ID          int64  `json:"id"`
	GUID        string `json:"guid"`
	StatusCode  int    `json:"status_code"`
	Event       string `json:"event"`
	Redelivery  bool   `json:"redelivery"`
	DeliveredAt string `json:"delivered_at"`
}

// Request is one request the fake received.
type Request struct {
	Method, Path string
	Status       int
}

// New starts a fake that checks app JWTs against key (the public half of
// the app's private key). It closes when the test ends.
func New(t testing.TB, key *rsa.PublicKey) *Server {
	t.Helper()
	s := newServer(key)
	hs := httptest.NewServer(s.handler(dotcom))
	t.Cleanup(hs.Close)
	s.URL, s.web, s.logs = hs.URL+"/", "https://github.com", hs.URL+dotcom.logs
	return s
}

// newServer is a fake with no listener yet: New and NewGHES give it one.
func newServer(key *rsa.PublicKey) *Server {
	return &Server{
		key: key, nextID: 1000, repos: map[string]*Repo{}, perms: map[string]string{},
		tokens: map[string]Token{}, issues: map[string]*Issue{}, now: time.Now,
		installPerms: map[int64]map[string]string{},
	}
}

// AddRepo registers a repository.
func (s *Server) AddRepo(r Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[strings.ToLower(r.Owner+"/"+r.Name)] = &r
}

// SetNextID makes the fake's next IDs (comments, review comments, check
// runs, tokens) start after id: real review-comment IDs passed 2^31, and
// a 32-bit field breaks on them.
func (s *Server) SetNextID(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID = id
}

// SetInstallationPermissions limits what installation id was granted, as
// GitHub names permissions ("pull_requests": "write"). Tokens it mints
// carry only these, a token request for more is refused with 422, and an
// endpoint that needs more answers 403 "Resource not accessible by
// integration". Metadata read is always granted.
func (s *Server) SetInstallationPermissions(id int64, perms map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installPerms[id] = perms
}

// Issue returns a copy of an issue; ok is false for an unknown one.
func (s *Server) Issue(owner, repo string, n int) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.issues[issueKey(owner, repo, n)]
	if !ok {
		return Issue{}, false
	}
	return *i, true
}

// EditIssue changes an issue's title and body, as a person editing it.
func (s *Server) EditIssue(owner, repo string, n int, title, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.issues[issueKey(owner, repo, n)]; i != nil {
		i.Title, i.Body = title, body
	}
}

// AddTeam gives team slug of the repository's organisation access to it,
// so that it can be asked to review.
func (s *Server) AddTeam(owner, repo, slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.teams == nil {
		s.teams = map[string]bool{}
	}
	s.teams[strings.ToLower(owner+"/"+repo+"/"+slug)] = true
}

// AddReview adds a submitted review of pull request pr, on its head as it
// is now, and returns its ID.
func (s *Server) AddReview(owner, repo string, pr int, author, state, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	head := ""
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) && p.Number == pr {
			if head = s.headSHA(owner, repo, p.Head); head == "" {
				head = p.HeadSHA
			}
		}
	}
	s.prReviews = append(s.prReviews, &Review{ID: s.nextID, Owner: owner, Repo: repo, Pull: pr, Author: author, State: state, Body: body,
		Submitted: s.now(), CommitID: head})
	s.touch(owner, repo, pr)
	return s.nextID
}

// SetPullState sets a pull request's state ("open", "closed"), as a person
// closing or merging it.
func (s *Server) SetPullState(owner, repo string, n int, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) && p.Number == n {
			p.State = state
			p.UpdatedAt = s.now()
		}
	}
}

// AddIssue registers an issue; State defaults to "open".
func (s *Server) AddIssue(i Issue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i.State == "" {
		i.State = "open"
	}
	s.issues[issueKey(i.Owner, i.Repo, i.Number)] = &i
}

// SetPermission sets user's permission (admin, write, read, none) on a
// repository; unknown users get a 404 like GitHub's for non-collaborators.
func (s *Server) SetPermission(owner, repo, user, perm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[strings.ToLower(owner+"/"+repo+"/"+user)] = perm
}

// AddReviewComment adds a review comment on pull request pr, starting a
// review thread of its own, and returns its ID.
func (s *Server) AddReviewComment(owner, repo string, pr int, author, path string, line int, body string, outdated bool) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.reviews = append(s.reviews, &Comment{ID: s.nextID, Owner: owner, Repo: repo, Issue: pr, Author: author, Body: body, Path: path, Line: line, Outdated: outdated, Created: s.now()})
	return s.nextID
}

// ResolveThread marks the review thread of comment id resolved, as a
// reviewer's "Resolve conversation" does.
func (s *Server) ResolveThread(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.reviews {
		if c.ID == id {
			c.Resolved = true
		}
	}
}

// AddComment adds an issue comment by author, as a person would.
func (s *Server) AddComment(owner, repo string, issue int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.comments = append(s.comments, &Comment{ID: s.nextID, Owner: owner, Repo: repo, Issue: issue, Author: author, Body: body, Created: s.now()})
	s.touch(owner, repo, issue)
	return s.nextID
}

// AddDelivery lists a hook delivery.
func (s *Server) AddDelivery(d Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliveries = append(s.deliveries, d)
}

// Fault is an injected answer.
type Fault struct {
	// Method and Path select requests: Path is matched as a prefix of the
	// URL path ("/repos/o/r/pulls"); empty Method matches every method.
	Method, Path string
	// Times is how many matching requests get the fault; at least 1.
	Times  int
	Status int
	Body   string
	Header http.Header
	// Landed lets the request take effect before the fault is answered:
	// a 502 or a timeout after GitHub created the comment.
	Landed bool
	// Before, when set, runs as a matching request arrives, before it is
	// served: someone else's push between two of Patchwright's requests.
	// With Status 0 the request is then served as usual.
	Before func()
}

// PrimaryRateLimit is GitHub's answer once an installation's hourly quota
// is spent: 403 with x-ratelimit-remaining 0 and the reset time in epoch
// seconds (GitHub also answers 429 for it).
func PrimaryRateLimit(method, path string, reset time.Time) Fault {
	return Fault{Method: method, Path: path, Status: http.StatusForbidden,
		Body: `{"message":"API rate limit exceeded for installation ID 11.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`,
		Header: http.Header{
			"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Used": {"5000"},
			"X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}, "X-Ratelimit-Resource": {"core"},
		}}
}

// SecondaryRateLimit is GitHub's secondary limit: 403 with its message,
// quota left, and no Retry-After (as in the recorded headers), times
// times.
func SecondaryRateLimit(method, path string, times int) Fault {
	return Fault{Method: method, Path: path, Status: http.StatusForbidden, Times: times,
		Body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`,
		Header: http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"4990"}, "X-Ratelimit-Resource": {"core"}}}
}

type fault struct {
	Fault
	left int
}

// Fail injects f.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{Fault: f, left: max(f.Times, 1)})
}

// Comments returns copies of an issue's comments, oldest first.
func (s *Server) Comments(owner, repo string, issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if sameRepo(c.Owner, c.Repo, owner, repo) && c.Issue == issue {
			out = append(out, *c)
		}
	}
	return out
}

// EditComment changes a comment's body as a person with write access
// may, whoever wrote it.
func (s *Server) EditComment(owner, repo string, id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if sameRepo(c.Owner, c.Repo, owner, repo) && c.ID == id {
			c.Body = body
			c.Edits++
		}
	}
}

// Reactions returns the reactions on an issue.
func (s *Server) Reactions(owner, repo string, issue int) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Reaction
	for _, r := range s.reactions {
		if sameRepo(r.Owner, r.Repo, owner, repo) && r.Issue == issue {
			out = append(out, r)
		}
	}
	return out
}

// Pulls returns copies of a repository's pull requests.
func (s *Server) Pulls(owner, repo string) []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Pull
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) {
			out = append(out, *p)
		}
	}
	return out
}

// CheckRuns returns copies of the check runs on a commit.
func (s *Server) CheckRuns(owner, repo, sha string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.checkRuns {
		if sameRepo(c.Owner, c.Repo, owner, repo) && c.HeadSHA == sha {
			out = append(out, *c)
		}
	}
	return out
}

// Tokens returns the tokens minted so far.
func (s *Server) Tokens() []Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Token
	for _, t := range s.tokens {
		out = append(out, t)
	}
	return out
}

// Redelivered returns the delivery IDs redelivery was asked for.
func (s *Server) Redelivered() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.redeliver...)
}

// Requests returns every request so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TokenHas reports whether token was minted by the fake with perm
// ("workflows=write"), for GitRemote.Workflows.
func (s *Server) TokenHas(token, perm string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	return ok && t.has(perm)
}

// ValidToken reports whether token was minted by the fake and may reach
// owner/repo: what a git remote's basic auth checks.
func (s *Server) ValidToken(token, owner, repo string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[token]
	return ok && t.allows(repo)
}

// has reports whether the token carries perm ("issues=write"). A token
// without a permission list has all of them; metadata read always.
func (t Token) has(perm string) bool {
	name, level, _ := strings.Cut(perm, "=")
	if len(t.Permissions) == 0 || name == "metadata" && level == "read" {
		return true
	}
	return atLeast(t.Permissions[name], level)
}

// atLeast reports whether GitHub permission level have includes want.
func atLeast(have, want string) bool {
	rank := map[string]int{"read": 1, "write": 2, "admin": 3}
	return rank[have] >= rank[want] && rank[have] > 0
}

func (t Token) allows(repo string) bool {
	if len(t.Repositories) == 0 {
		return true
	}
	for _, r := range t.Repositories {
		if strings.EqualFold(r, repo) {
			return true
		}
	}
	return false
}

func sameRepo(o1, r1, o2, r2 string) bool {
	return strings.EqualFold(o1, o2) && strings.EqualFold(r1, r2)
}

func issueKey(owner, repo string, n int) string {
	return strings.ToLower(owner+"/"+repo) + "#" + strconv.Itoa(n)
}

// verifyJWT checks an RS256 app JWT: signature by the app's key, issuer
// the app ID, not expired.
func (s *Server) verifyJWT(auth string) error {
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return fmt.Errorf("app endpoint wants a Bearer JWT")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("malformed JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("JWT signature: %v", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(s.key, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("JWT signature: %v", err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("JWT payload: %v", err)
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Exp int64           `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return fmt.Errorf("JWT payload: %v", err)
	}
	if strings.Trim(string(claims.Iss), `"`) != strconv.Itoa(AppID) {
		return fmt.Errorf("JWT issuer %s is not app %d", claims.Iss, AppID)
	}
	// The app signs with the real clock; SetClock moves only records.
	if time.Unix(claims.Exp, 0).Before(time.Now()) {
		return fmt.Errorf("JWT expired")
	}
	return nil
}
