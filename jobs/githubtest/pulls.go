package githubtest

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) pullJSON(p *Pull) map[string]any {
	// GitHub answers the branch's head as it is now, pushes since the
	// pull request opened included.
	if live := s.headSHA(p.Owner, p.Repo, p.Head); live != "" {
		p.HeadSHA = live
	}
	return map[string]any{
		"number": p.Number, "title": p.Title, "body": p.Body, "draft": p.Draft, "state": p.State,
		"node_id": pullNodeID(p), "updated_at": p.UpdatedAt.UTC().Format(time.RFC3339),
		"html_url": fmt.Sprintf("%s/%s/%s/pull/%d", s.web, p.Owner, p.Repo, p.Number),
		"user":     user(p.Author),
		"head":     map[string]any{"ref": p.Head, "sha": p.HeadSHA, "label": p.Owner + ":" + p.Head},
		"base":     map[string]any{"ref": p.Base},
		"merged":   p.Merged, "created_at": timeOrNil(p.CreatedAt), "closed_at": timeOrNil(p.ClosedAt),
		"merged_at": mergedAt(p),
	}
}

func (s *Server) headSHA(owner, repo, branch string) string {
	rp := s.repos[strings.ToLower(owner+"/"+repo)]
	if rp == nil || rp.Heads == nil {
		return ""
	}
	return rp.Heads(branch)
}

// listPulls honours state, head ("owner:branch") and base, as
// Patchwright uses them.
func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var all []map[string]any
	s.mu.Lock()
	for _, p := range s.pulls {
		if !sameRepo(p.Owner, p.Repo, r.PathValue("owner"), r.PathValue("repo")) || (state != "all" && p.State != state) {
			continue
		}
		if h := q.Get("head"); h != "" && !strings.EqualFold(h, p.Owner+":"+p.Head) {
			continue
		}
		if b := q.Get("base"); b != "" && b != p.Base {
			continue
		}
		p.HeadSHA = s.headSHA(p.Owner, p.Repo, p.Head)
		all = append(all, s.pullJSON(p))
	}
	s.mu.Unlock()
	writePage(w, r, all)
}

// createPull refuses a second open pull request from the same head with
// GitHub's 422 "A pull request already exists".
func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title string `json:"title"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Body  string `json:"body"`
		Draft bool   `json:"draft"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	if req.Title == "" || req.Head == "" || req.Base == "" {
		fail(w, http.StatusUnprocessableEntity, "Validation Failed: title, head and base are required")
		return
	}
	if !validPull(w, &req.Title, &req.Body) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp := s.repos[strings.ToLower(owner+"/"+repo)]; req.Draft && rp != nil && rp.NoDrafts {
		// GitHub's real shape: the sentence is in the errors list, under
		// a top-level "Validation Failed".
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message":           "Validation Failed",
			"errors":            []map[string]string{{"resource": "PullRequest", "code": "custom", "message": draftRefusal}},
			"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
		})
		return
	}
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) && p.Head == req.Head && p.State == "open" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
				"message": "Validation Failed",
				"errors":  []map[string]string{{"resource": "PullRequest", "code": "custom", "message": "A pull request already exists for " + owner + ":" + req.Head + "."}},
			})
			return
		}
	}
	n := 1
	for _, i := range s.issues {
		if sameRepo(i.Owner, i.Repo, owner, repo) {
			n = max(n, i.Number+1)
		}
	}
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) {
			n = max(n, p.Number+1)
		}
	}
	p := &Pull{Number: n, Owner: owner, Repo: repo, Title: req.Title, Body: req.Body, Head: req.Head, Base: req.Base,
		Draft: req.Draft, State: "open", Author: s.tokenLogin(r), HeadSHA: s.headSHA(owner, repo, req.Head)}
	p.UpdatedAt, p.CreatedAt = s.now(), s.now()
	s.pulls = append(s.pulls, p)
	writeJSON(w, http.StatusCreated, s.pullJSON(p))
}

// draftRefusal is GitHub's message where draft pull requests are not
// available (private repositories on GitHub Free).
const draftRefusal = "Draft pull requests are not supported in this repository."

// validPull checks a pull request's title and body against GitHub's
// limits; nil fields are not being set.
func validPull(w http.ResponseWriter, title, body *string) bool {
	switch {
	case title != nil && chars(*title) > MaxTitle:
		tooLong(w, "PullRequest", "title", MaxTitle)
		return false
	case body != nil && chars(*body) > MaxBody:
		tooLong(w, "PullRequest", "body", MaxBody)
		return false
	}
	return true
}

func (s *Server) pull(w http.ResponseWriter, r *http.Request) *Pull {
	n, ok := number(w, r, "n")
	if !ok {
		return nil
	}
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, r.PathValue("owner"), r.PathValue("repo")) && p.Number == int(n) {
			return p
		}
	}
	fail(w, http.StatusNotFound, "Not Found")
	return nil
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pull(w, r); p != nil {
		p.HeadSHA = s.headSHA(p.Owner, p.Repo, p.Head)
		m := s.pullJSON(p)
		m["mergeable_state"] = s.mergeableState(p)
		writeJSON(w, http.StatusOK, m)
	}
}

// mergeableState is GitHub's mergeable_state of an open pull request,
// which only its single GET carries, as for a repository whose rules
// require branches to be up to date: "clean" when the head holds the
// base, "dirty" when the two conflict, "behind" otherwise; "unknown"
// without a git remote.
func (s *Server) mergeableState(p *Pull) string {
	rp := s.repos[strings.ToLower(p.Owner+"/"+p.Repo)]
	if rp == nil || p.State != "open" {
		return "unknown"
	}
	dir := bareOf(rp)
	base := s.headSHA(p.Owner, p.Repo, p.Base)
	if dir == "" || base == "" || p.HeadSHA == "" {
		return "unknown"
	}
	if _, err := bare(dir, nil, nil, "merge-base", "--is-ancestor", base, p.HeadSHA); err == nil {
		return "clean"
	}
	if _, err := bare(dir, nil, nil, "merge-tree", "--write-tree", p.HeadSHA, base); err != nil {
		return "dirty"
	}
	return "behind"
}

func (s *Server) editPull(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(w, r)
	if p == nil {
		return
	}
	if !validPull(w, req.Title, req.Body) {
		return
	}
	if req.Title != nil {
		p.Title = *req.Title
	}
	if req.Body != nil {
		p.Body = *req.Body
	}
	if req.State != nil {
		p.State = *req.State
	}
	p.Edits++
	p.UpdatedAt = s.now()
	writeJSON(w, http.StatusOK, s.pullJSON(p))
}

func (s *Server) listReviewComments(w http.ResponseWriter, r *http.Request) {
	n, ok := number(w, r, "n")
	if !ok {
		return
	}
	var all []map[string]any
	s.mu.Lock()
	for _, c := range s.reviews {
		if sameRepo(c.Owner, c.Repo, r.PathValue("owner"), r.PathValue("repo")) && c.Issue == int(n) {
			// position is closing down: the fake leaves it null, so code
			// that still reads it sees every comment as outdated. An
			// outdated comment has a null line and keeps original_line.
			m := s.commentJSON(c)
			m["path"], m["line"], m["original_line"], m["position"] = c.Path, c.Line, c.Line, nil
			if c.Outdated {
				m["line"] = nil
			}
			all = append(all, m)
		}
	}
	s.mu.Unlock()
	writePage(w, r, all)
}

func pullNodeID(p *Pull) string { return fmt.Sprintf("PR_%s_%s_%d", p.Owner, p.Repo, p.Number) }

type graphqlReq struct {
	Query     string `json:"query"`
	Variables struct {
		Owner  string  `json:"owner"`
		Repo   string  `json:"repo"`
		Number int     `json:"number"`
		Cursor *string `json:"cursor"`
		ID     string  `json:"id"`
		// updateRefs: the repository's node ID and one ref's update.
		RepositoryID string `json:"repositoryId"`
		Name         string `json:"name"`
		Before       string `json:"before"`
		After        string `json:"after"`
	} `json:"variables"`
}

func graphqlError(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusOK, map[string]any{"errors": []map[string]any{{"message": msg}}})
}

// graphql answers what Patchwright asks of GraphQL: a pull request's review
// threads, and the two mutations of its draft state. Anything else is a
// GraphQL error, as GitHub answers it.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	var req graphqlReq
	if !readJSON(w, r, &req) {
		return
	}
	switch {
	case strings.Contains(req.Query, "reviewThreads"):
		s.reviewThreads(w, req)
	case strings.Contains(req.Query, "markPullRequestReadyForReview"):
		s.setDraft(w, req, "markPullRequestReadyForReview", false)
	case strings.Contains(req.Query, "convertPullRequestToDraft"):
		s.setDraft(w, req, "convertPullRequestToDraft", true)
	case strings.Contains(req.Query, "updateRefs"):
		s.updateRefs(w, r, req)
	case strings.Contains(req.Query, "minimizeComment"):
		s.minimizeComment(w, req)
	default:
		graphqlError(w, "unsupported query")
	}
}

func (s *Server) setDraft(w http.ResponseWriter, req graphqlReq, mutation string, draft bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pulls {
		if pullNodeID(p) == req.Variables.ID {
			if rp := s.repos[strings.ToLower(p.Owner+"/"+p.Repo)]; draft && rp != nil && rp.NoDrafts {
				graphqlError(w, draftRefusal)
				return
			}
			p.Draft = draft
			p.Edits++
			writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{mutation: map[string]any{"pullRequest": map[string]any{"isDraft": p.Draft}}}})
			return
		}
	}
	graphqlError(w, fmt.Sprintf("Could not resolve to a node with the global id of '%s'", req.Variables.ID))
}

// reviewThreads lists a pull request's review threads, one thread a review
// comment, in pages of two so that paging is exercised.
func (s *Server) reviewThreads(w http.ResponseWriter, req graphqlReq) {
	v := req.Variables
	start := 0
	if v.Cursor != nil {
		start, _ = strconv.Atoi(*v.Cursor)
	}
	var threads []map[string]any
	s.mu.Lock()
	for _, c := range s.reviews {
		if sameRepo(c.Owner, c.Repo, v.Owner, v.Repo) && c.Issue == v.Number {
			node := map[string]any{}
			if strings.Contains(strings.ReplaceAll(req.Query, "fullDatabaseId", ""), "databaseId") {
				if c.ID > math.MaxInt32 {
					// databaseId is a GraphQL Int: 32 bits. GitHub
					// answers a larger ID with a coercion error.
					s.mu.Unlock()
					graphqlError(w, fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %d", c.ID))
					return
				}
				node["databaseId"] = c.ID
			}
			if strings.Contains(req.Query, "fullDatabaseId") {
				// A BigInt, which GitHub encodes as a string.
				node["fullDatabaseId"] = strconv.FormatInt(c.ID, 10)
			}
			threads = append(threads, map[string]any{
				"isResolved": c.Resolved,
				"isOutdated": c.Outdated,
				"comments":   map[string]any{"nodes": []map[string]any{node}},
			})
		}
	}
	s.mu.Unlock()
	end := min(start+2, len(threads))
	page := map[string]any{"hasNextPage": end < len(threads), "endCursor": strconv.Itoa(end)}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{
		"pullRequest": map[string]any{"reviewThreads": map[string]any{"nodes": threads[min(start, end):end], "pageInfo": page}},
	}}})
}

// listReviews lists a pull request's submitted reviews.
func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	n, ok := number(w, r, "n")
	if !ok {
		return
	}
	var all []map[string]any
	s.mu.Lock()
	for _, v := range s.prReviews {
		if sameRepo(v.Owner, v.Repo, r.PathValue("owner"), r.PathValue("repo")) && v.Pull == int(n) {
			all = append(all, map[string]any{"id": v.ID, "user": user(v.Author), "body": v.Body, "state": v.State,
				"submitted_at": v.Submitted.UTC().Format(time.RFC3339), "commit_id": v.CommitID})
		}
	}
	s.mu.Unlock()
	writePage(w, r, all)
}
