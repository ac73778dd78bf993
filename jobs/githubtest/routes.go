package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// GitHub's limits on what it stores, in characters; over them it answers
// 422 "Validation Failed".
const (
	// MaxBody is the longest issue, comment or pull-request body.
	MaxBody = 65536
	// MaxCheckRunText is the longest check-run output summary or text.
	MaxCheckRunText = 65535
	// MaxAnnotations is how many annotations one check-run request takes.
	MaxAnnotations = 50
	// MaxTitle is the longest pull-request title.
	MaxTitle = 256
)

// tooLong answers GitHub's 422 for a field over its limit.
func tooLong(w http.ResponseWriter, resource, field string, limit int) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed",
		"errors": []map[string]string{{"resource": resource, "code": "custom", "field": field,
			"message": fmt.Sprintf("%s is too long (maximum is %d characters)", field, limit)}},
		"documentation_url": "https://docs.github.com/rest",
	})
}

func chars(s string) int { return utf8.RuneCountInString(s) }

// shape is where a server puts its endpoints: the REST root's path ("" on
// github.com's API host, "/api/v3" on GitHub Enterprise Server), GraphQL's
// path, and the path prefix of job-log downloads.
type shape struct{ rest, graphql, logs string }

// dotcom is api.github.com's shape.
var dotcom = shape{rest: "", graphql: "/graphql", logs: "/_download/job-logs/"}

// handler routes the endpoints at sh; every request is recorded, then
// checked against the injected faults, then authenticated. A request no
// route takes is a stray (Strays).
func (s *Server) handler(sh shape) http.Handler {
	mux := http.NewServeMux()
	at := func(pattern string) string {
		method, path, _ := strings.Cut(pattern, " ")
		return method + " " + sh.rest + path
	}
	app := func(pattern string, h http.HandlerFunc) { mux.Handle(at(pattern), s.appAuth(h)) }
	// inst registers an installation endpoint with the permission GitHub
	// requires of an app for it ("" for none), as its REST reference
	// lists it.
	inst := func(pattern, perm string, h http.HandlerFunc) { mux.Handle(at(pattern), s.tokenAuth(perm, h)) }
	mux.HandleFunc("/", s.stray)
	// The manifest flow's code exchange needs no credentials.
	mux.HandleFunc(at("POST /app-manifests/{code}/conversions"), s.convertManifest)

	app("GET /app", s.getApp)
	app("POST /app/installations/{id}/access_tokens", s.mintToken)
	app("GET /app/hook/deliveries", s.listDeliveries)
	app("GET /app/installations", s.listInstallations)
	inst("GET /installation/repositories", "", s.listInstallationRepos)
	inst("POST /repos/{owner}/{repo}/issues", "issues=write", s.createIssue)
	inst("GET /repos/{owner}/{repo}/issues", "issues=read", s.listIssues)
	app("POST /app/hook/deliveries/{id}/attempts", s.redeliverOne)
	inst("GET /users/{login}", "", s.getUser)
	inst("GET /advisories", "", s.listAdvisories)
	inst("GET /repos/{owner}/{repo}", "metadata=read", s.getRepo)
	inst("GET /repos/{owner}/{repo}/collaborators/{user}/permission", "metadata=read", s.getPermission)
	inst("GET /repos/{owner}/{repo}/issues/{n}", "issues=read", s.getIssue)
	inst("GET /repos/{owner}/{repo}/issues/{n}/comments", "issues=read", s.listComments)
	inst("POST /repos/{owner}/{repo}/issues/{n}/comments", "issues=write", s.createComment)
	inst("PATCH /repos/{owner}/{repo}/issues/comments/{id}", "issues=write", s.editComment)
	inst("POST /repos/{owner}/{repo}/issues/{n}/reactions", "issues=write", s.createReaction)
	inst("POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", "issues=write", s.createCommentReaction)
	inst("GET /repos/{owner}/{repo}/pulls", "pull_requests=read", s.listPulls)
	inst("POST /repos/{owner}/{repo}/pulls", "pull_requests=write", s.createPull)
	inst("GET /repos/{owner}/{repo}/pulls/{n}", "pull_requests=read", s.getPull)
	inst("PATCH /repos/{owner}/{repo}/pulls/{n}", "pull_requests=write", s.editPull)
	inst("GET /repos/{owner}/{repo}/pulls/{n}/comments", "pull_requests=read", s.listReviewComments)
	inst("GET /repos/{owner}/{repo}/pulls/{n}/reviews", "pull_requests=read", s.listReviews)
	inst("GET /repos/{owner}/{repo}/pulls/{n}/commits", "pull_requests=read", s.listPullCommits)
	mux.Handle("POST "+sh.graphql, s.tokenAuth("", s.graphql))
	inst("POST /repos/{owner}/{repo}/check-runs", "checks=write", s.createCheckRun)
	inst("PATCH /repos/{owner}/{repo}/check-runs/{id}", "checks=write", s.updateCheckRun)
	inst("GET /repos/{owner}/{repo}/commits/{sha}/check-runs", "checks=read", s.listCheckRuns)
	inst("GET /repos/{owner}/{repo}/check-runs/{id}/annotations", "checks=read", s.listAnnotations)
	inst("GET /repos/{owner}/{repo}/actions/jobs/{id}/logs", "actions=read", s.jobLogs)
	// The download a job-log redirect points at: GitHub's is a
	// short-lived signed URL on another host, read without the token.
	mux.HandleFunc("GET "+sh.logs+"{id}", s.downloadJobLog)
	// Issue attachments, on the web host: not an API route, so they
	// check the token themselves.
	mux.HandleFunc("GET /user-attachments/assets/{id}", s.getAttachment)
	inst("GET /repos/{owner}/{repo}/compare/{basehead}", "contents=read", s.compare)
	inst("GET /repos/{owner}/{repo}/commits/{sha}", "contents=read", s.getCommit)
	inst("GET /repos/{owner}/{repo}/contents/{path...}", "contents=read", s.getContents)
	s.gitDataRoutes(inst)
	inst("POST /repos/{owner}/{repo}/merges", "contents=write", s.mergeBranch)
	inst("POST /repos/{owner}/{repo}/pulls/{n}/requested_reviewers", "pull_requests=write", s.requestReviewers)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.mu.Lock()
			s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Status: rec.status})
			s.mu.Unlock()
		}()
		f := s.takeFault(r)
		if f != nil && f.Before != nil {
			f.Before()
		}
		if f != nil && f.Status != 0 {
			if f.Landed {
				// The request takes effect; only its answer is lost.
				mux.ServeHTTP(httptest.NewRecorder(), r)
			}
			for k, vs := range f.Header {
				for _, v := range vs {
					rec.Header().Add(k, v)
				}
			}
			rec.Header().Set("Content-Type", "application/json; charset=utf-8")
			rec.WriteHeader(f.Status)
			io.WriteString(rec, f.Body)
			return
		}
		mux.ServeHTTP(rec, r)
	})
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) takeFault(r *http.Request) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.left > 0 && (f.Method == "" || f.Method == r.Method) && strings.HasPrefix(r.URL.Path, f.Path) {
			f.left--
			ff := f.Fault
			return &ff
		}
	}
	return nil
}

func (s *Server) appAuth(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.verifyJWT(r.Header.Get("Authorization")); err != nil {
			fail(w, http.StatusUnauthorized, err.Error())
			return
		}
		h(w, r)
	})
}

// tokenAuth checks the installation token, the repository it may reach,
// and the permission perm ("issues=write") the endpoint needs: a token
// without it gets GitHub's 403 "Resource not accessible by integration"
// with the X-Accepted-GitHub-Permissions header naming what is needed.
func (s *Server) tokenAuth(perm string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
		s.mu.Lock()
		t, known := s.tokens[v]
		s.mu.Unlock()
		if !ok || !known {
			fail(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if repo := r.PathValue("repo"); repo != "" && !t.allows(repo) {
			fail(w, http.StatusForbidden, "Resource not accessible by integration")
			return
		}
		if perm != "" && !t.has(perm) {
			w.Header().Set("X-Accepted-GitHub-Permissions", perm)
			fail(w, http.StatusForbidden, "Resource not accessible by integration")
			return
		}
		h(w, r)
	})
}

func fail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "Problems parsing JSON: "+err.Error())
		return false
	}
	return true
}

func number(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || n <= 0 {
		fail(w, http.StatusNotFound, "Not Found")
		return 0, false
	}
	return n, true
}

func user(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "type": typ}
}

func (s *Server) getApp(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"id": AppID, "slug": AppSlug, "name": "Patchwright test"})
}

func (s *Server) mintToken(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	var req struct {
		Repositories []string          `json:"repositories"`
		Permissions  map[string]string `json:"permissions"`
	}
	if r.ContentLength != 0 && !readJSON(w, r, &req) {
		return
	}
	s.mu.Lock()
	granted, limited := s.installPerms[id]
	perms := req.Permissions
	if perms == nil && limited {
		perms = granted
	}
	for name, level := range req.Permissions {
		if limited && !atLeast(granted[name], level) {
			s.mu.Unlock()
			fail(w, http.StatusUnprocessableEntity, "The permissions requested are not granted to this installation.")
			return
		}
	}
	s.nextID++
	t := Token{Value: fmt.Sprintf("ghs_fake%d", s.nextID), InstallationID: id, Repositories: req.Repositories, Permissions: perms}
	s.tokens[t.Value] = t
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": t.Value, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"permissions": req.Permissions, "repository_selection": "selected",
	})
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ds := append([]Delivery{}, s.deliveries...)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, ds)
}

func (s *Server) redeliverOne(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	s.mu.Lock()
	s.redeliver = append(s.redeliver, id)
	s.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{})
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	login := r.PathValue("login")
	u := user(login)
	u["id"] = UserID(login)
	writeJSON(w, http.StatusOK, u)
}

func (s *Server) repo(w http.ResponseWriter, r *http.Request) (*Repo, bool) {
	s.mu.Lock()
	rp, ok := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
	s.mu.Unlock()
	if !ok {
		fail(w, http.StatusNotFound, "Not Found")
	}
	return rp, ok
}

func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) {
	rp, ok := s.repo(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name": rp.Name, "full_name": rp.Owner + "/" + rp.Name, "owner": user(rp.Owner),
		"default_branch": rp.DefaultBranch, "clone_url": rp.CloneURL, "private": true, "node_id": repoNodeID(rp),
	})
}

func (s *Server) getPermission(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, ok := s.perms[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo")+"/"+r.PathValue("user"))]
	s.mu.Unlock()
	if !ok {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"permission": p, "role_name": p, "user": user(r.PathValue("user"))})
}

func (s *Server) getIssue(w http.ResponseWriter, r *http.Request) {
	n, ok := number(w, r, "n")
	if !ok {
		return
	}
	s.mu.Lock()
	i, found := s.issues[issueKey(r.PathValue("owner"), r.PathValue("repo"), int(n))]
	var cp Issue
	if found {
		cp = *i
	}
	s.mu.Unlock()
	if !found {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"number": cp.Number, "title": cp.Title, "body": cp.Body, "state": cp.State, "user": user(cp.Author)})
}

func (s *Server) commentJSON(c *Comment) map[string]any {
	created := c.Created
	if created.IsZero() {
		created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return map[string]any{
		"id": c.ID, "node_id": commentNodeID(c), "body": c.Body, "user": user(c.Author),
		"html_url":   fmt.Sprintf("%s/%s/%s/issues/%d#issuecomment-%d", s.web, c.Owner, c.Repo, c.Issue, c.ID),
		"created_at": created.UTC().Format(time.RFC3339),
	}
}

// listComments pages like GitHub: per_page (default 30) and page, with a
// Link header to the next page.
func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	n, ok := number(w, r, "n")
	if !ok {
		return
	}
	var all []map[string]any
	s.mu.Lock()
	for _, c := range s.comments {
		if sameRepo(c.Owner, c.Repo, r.PathValue("owner"), r.PathValue("repo")) && c.Issue == int(n) {
			all = append(all, s.commentJSON(c))
		}
	}
	s.mu.Unlock()
	writePage(w, r, all)
}

func writePage(w http.ResponseWriter, r *http.Request, all []map[string]any) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	lo, hi := min((page-1)*per, len(all)), min(page*per, len(all))
	if hi < len(all) {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(page+1))
		u.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, u.RequestURI()))
	}
	out := all[lo:hi]
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) tokenLogin(r *http.Request) string {
	return BotLogin
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	n, ok := number(w, r, "n")
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.nextID++
	c := &Comment{ID: s.nextID, Owner: r.PathValue("owner"), Repo: r.PathValue("repo"), Issue: int(n), Author: s.tokenLogin(r), Body: body, Created: s.now()}
	s.comments = append(s.comments, c)
	s.touch(c.Owner, c.Repo, c.Issue)
	out := s.commentJSON(c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

// commentBody reads a comment's body as GitHub checks it, on a new comment
// and on an edit alike.
func commentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var req struct {
		Body string `json:"body"`
	}
	if !readJSON(w, r, &req) {
		return "", false
	}
	switch {
	case req.Body == "":
		fail(w, http.StatusUnprocessableEntity, "Validation Failed: body is missing")
		return "", false
	case chars(req.Body) > MaxBody:
		tooLong(w, "IssueComment", "body", MaxBody)
		return "", false
	}
	return req.Body, true
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if c.ID == id && sameRepo(c.Owner, c.Repo, r.PathValue("owner"), r.PathValue("repo")) {
			if c.Author != s.tokenLogin(r) {
				fail(w, http.StatusForbidden, "Resource not accessible by integration")
				return
			}
			c.Body, c.Edits = body, c.Edits+1
			writeJSON(w, http.StatusOK, s.commentJSON(c))
			return
		}
	}
	fail(w, http.StatusNotFound, "Not Found")
}

// createReaction answers 201 for a new reaction and 200 for one the same
// user already left, like GitHub.
func (s *Server) createReaction(w http.ResponseWriter, r *http.Request) {
	n, ok := number(w, r, "n")
	if !ok {
		return
	}
	s.react(w, r, Reaction{Owner: r.PathValue("owner"), Repo: r.PathValue("repo"), Issue: int(n), Author: s.tokenLogin(r)})
}

// createCommentReaction reacts to an issue comment as createReaction
// does to an issue; 404 for a comment the repository does not have.
func (s *Server) createCommentReaction(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	re := Reaction{Owner: r.PathValue("owner"), Repo: r.PathValue("repo"), Comment: id, Author: s.tokenLogin(r)}
	s.mu.Lock()
	for _, c := range s.comments {
		if c.ID == id && sameRepo(c.Owner, c.Repo, re.Owner, re.Repo) {
			re.Issue = c.Issue
		}
	}
	s.mu.Unlock()
	if re.Issue == 0 {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	s.react(w, r, re)
}

// react reads the reaction's content and stores re with it once.
func (s *Server) react(w http.ResponseWriter, r *http.Request, re Reaction) {
	var req struct {
		Content string `json:"content"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	switch req.Content {
	case "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes":
	default:
		fail(w, http.StatusUnprocessableEntity, "Validation Failed: content")
		return
	}
	re.Content = req.Content
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.reactions {
		if sameRepo(x.Owner, x.Repo, re.Owner, re.Repo) && x.Issue == re.Issue && x.Comment == re.Comment && x.Content == re.Content && x.Author == re.Author {
			writeJSON(w, http.StatusOK, map[string]any{"content": re.Content, "user": user(re.Author)})
			return
		}
	}
	s.reactions = append(s.reactions, re)
	writeJSON(w, http.StatusCreated, map[string]any{"content": re.Content, "user": user(re.Author)})
}
