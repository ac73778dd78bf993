package githubtest

import (
	"time"
)

// SetClock makes now the clock of what the fake records: the time of
// every comment, review, pull-request update and Touch from then on (a
// JWT's expiry is still checked against the real clock).
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Touch sets a pull request's updated_at to now, as a push to its branch
// or a label does on GitHub.
func (s *Server) Touch(owner, repo string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch(owner, repo, n)
}

// touch is Touch with s.mu held; a number that is no pull request (an
// issue's) changes nothing.
func (s *Server) touch(owner, repo string, n int) {
	for _, p := range s.pulls {
		if sameRepo(p.Owner, p.Repo, owner, repo) && p.Number == n {
			p.UpdatedAt = s.now()
		}
	}
}

// AddInstallation lists installation id, reaching repos ("owner/name"),
// in GET /app/installations and its GET /installation/repositories.
func (s *Server) AddInstallation(id int64, repos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.installRepos == nil {
		s.installRepos = map[int64][]string{}
	}
	s.installRepos[id] = append(s.installRepos[id], repos...)
}
