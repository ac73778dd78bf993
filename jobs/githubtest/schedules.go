package githubtest

import (
	"net/http"
	"slices"
	"strings"
)

// The endpoints a schedule scan reads: the app's installations, an
// installation's repositories, a default-branch file, a repository's
// issues, and a new issue.

func (r *Repo) installation() int64 {
	if r.Installation == 0 {
		return 1
	}
	return r.Installation
}

// installationRepos is every installation's repositories ("owner/name"):
// each Repo under its Installation, and what AddInstallation listed; s.mu
// held.
func (s *Server) installationRepos() map[int64][]string {
	all := map[int64][]string{}
	for _, rp := range s.repos {
		all[rp.installation()] = append(all[rp.installation()], rp.Owner+"/"+rp.Name)
	}
	for id, repos := range s.installRepos {
		for _, full := range repos {
			if !slices.ContainsFunc(all[id], func(s string) bool { return strings.EqualFold(s, full) }) {
				all[id] = append(all[id], full)
			}
		}
	}
	return all
}

func (s *Server) listInstallations(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	all := s.installationRepos()
	s.mu.Unlock()
	out := []map[string]any{}
	for id, repos := range all {
		owner, _, _ := strings.Cut(repos[0], "/")
		out = append(out, map[string]any{"id": id, "app_id": AppID, "account": user(owner)})
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return int(a["id"].(int64) - b["id"].(int64)) })
	writeJSON(w, http.StatusOK, out)
}

// listInstallationRepos answers for the installation of the request's
// token, as GitHub's {total_count, repositories}.
func (s *Server) listInstallationRepos(w http.ResponseWriter, r *http.Request) {
	v, _ := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	s.mu.Lock()
	t := s.tokens[v]
	all := s.installationRepos()
	s.mu.Unlock()
	repos := []map[string]any{}
	for _, full := range all[t.InstallationID] {
		owner, name, _ := strings.Cut(full, "/")
		if t.allows(name) {
			repos = append(repos, map[string]any{"name": name, "full_name": full, "owner": user(owner)})
		}
	}
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

// listIssues answers GET issues with the repository's issues, newest
// first, filtered by `creator` and `state` (open by default, or closed,
// or all) as GitHub filters them. `since` is not read: the fake's issues
// carry no times, so every issue counts as updated since then.
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.repo(w, r); !ok {
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	s.mu.Lock()
	var list []Issue
	for _, i := range s.issues {
		if sameRepo(i.Owner, i.Repo, r.PathValue("owner"), r.PathValue("repo")) &&
			(state == "all" || i.State == state) &&
			(q.Get("creator") == "" || strings.EqualFold(i.Author, q.Get("creator"))) {
			list = append(list, *i)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(list, func(a, b Issue) int { return b.Number - a.Number })
	out := []map[string]any{}
	for _, i := range list {
		out = append(out, map[string]any{"number": i.Number, "title": i.Title, "body": i.Body, "state": i.State, "user": user(i.Author)})
	}
	writeJSON(w, http.StatusOK, out)
}
