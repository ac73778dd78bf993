package githubtest

import (
	"net/http"
	"time"
)

// PullCommit is one commit on a pull request: its SHA and the login
// GitHub links its author to.
type PullCommit struct {
	SHA, Author string
}

// AddPullCommit adds a commit by author to pull request n, as a push to
// its branch would.
func (s *Server) AddPullCommit(owner, repo string, n int, sha, author string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) && p.Number == n {
			p.Commits = append(p.Commits, PullCommit{SHA: sha, Author: author})
			p.UpdatedAt = s.now()
		}
	}
}

// MergePull merges pull request n: closed, merged, at the fake's clock.
func (s *Server) MergePull(owner, repo string, n int) {
	s.closePull(owner, repo, n, true)
}

// ClosePull closes pull request n unmerged at the fake's clock.
func (s *Server) ClosePull(owner, repo string, n int) {
	s.closePull(owner, repo, n, false)
}

func (s *Server) closePull(owner, repo string, n int, merged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) && p.Number == n {
			p.State, p.Merged = "closed", merged
			p.ClosedAt, p.UpdatedAt = s.now(), s.now()
		}
	}
}

// listPullCommits lists a pull request's commits, oldest first.
func (s *Server) listPullCommits(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p := s.pull(w, r)
	if p == nil {
		s.mu.Unlock()
		return
	}
	all := []map[string]any{}
	for _, c := range p.Commits {
		all = append(all, map[string]any{"sha": c.SHA, "author": user(c.Author),
			"commit": map[string]any{"author": map[string]any{"name": c.Author}, "message": "commit " + c.SHA}})
	}
	s.mu.Unlock()
	writePage(w, r, all)
}

// timeOrNil is t in GitHub's format, or JSON null when t is zero.
func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// mergedAt is a merged pull request's merged_at (its ClosedAt), else null.
func mergedAt(p *Pull) any {
	if !p.Merged {
		return nil
	}
	return timeOrNil(p.ClosedAt)
}
