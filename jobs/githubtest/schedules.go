package githubtest

import (
	"net/http"
	"slices"
	"strings"
)

// The endpoints a schedule scan reads: the app's installations, an
// installation's repositories, a default-branch file, and a new issue.

func (r *Repo) installation() int64 {
	if r.Installation == 0 {
		return 1
	}
	return r.Installation
}

func (s *Server) listInstallations(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var ids []int64
	for _, rp := range s.repos {
		if id := rp.installation(); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(ids)
	out := []map[string]any{}
	for _, id := range ids {
		out = append(out, map[string]any{"id": id, "account": user("owner")})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listInstallationRepos(w http.ResponseWriter, r *http.Request) {
	v, _ := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	s.mu.Lock()
	t := s.tokens[v]
	repos := []map[string]any{}
	for _, rp := range s.repos {
		if rp.installation() == t.InstallationID && t.allows(rp.Name) {
			repos = append(repos, map[string]any{"name": rp.Name, "full_name": rp.Owner + "/" + rp.Name, "owner": user(rp.Owner)})
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(repos), "repositories": repos})
}

func (s *Server) createIssue(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.repo(w, r); !ok {
		return
	}
	var req struct{ Title, Body string }
	if !readJSON(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Title) == "" {
		fail(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	owner, name := r.PathValue("owner"), r.PathValue("repo")
	s.mu.Lock()
	n := 0 // issues and pull requests share their numbers
	for _, i := range s.issues {
		if sameRepo(i.Owner, i.Repo, owner, name) {
			n = max(n, i.Number)
		}
	}
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, name) {
			n = max(n, p.Number)
		}
	}
	i := &Issue{Owner: owner, Repo: name, Number: n + 1, Title: req.Title, Body: req.Body, Author: BotLogin, State: "open"}
	s.issues[issueKey(owner, name, i.Number)] = i
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"number": i.Number, "title": i.Title, "body": i.Body, "state": "open", "user": user(BotLogin)})
}
