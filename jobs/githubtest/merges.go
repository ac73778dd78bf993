package githubtest

import (
	"errors"
	"net/http"
	"os/exec"
	"slices"
	"strings"
)

// mergeBranch answers POST merges as GitHub does: 201 with the merge
// commit, 204 when base already holds head, 404 "Base does not exist" or
// "Head does not exist", 409 "Merge conflict".
func (s *Server) mergeBranch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Base          string `json:"base"`
		Head          string `json:"head"`
		CommitMessage string `json:"commit_message"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	s.mu.Lock()
	rp := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
	s.mu.Unlock()
	if rp == nil || rp.Merge == nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	if req.Base == "" || req.Head == "" {
		fail(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	msg := req.CommitMessage
	if msg == "" {
		msg = "Merge " + req.Head + " into " + req.Base
	}
	sha, conflict, err := rp.Merge(req.Base, req.Head, msg)
	switch {
	case errors.Is(err, errNoBase):
		fail(w, http.StatusNotFound, "Base does not exist")
	case errors.Is(err, errNoHead):
		fail(w, http.StatusNotFound, "Head does not exist")
	case err != nil:
		fail(w, http.StatusInternalServerError, err.Error())
	case conflict:
		fail(w, http.StatusConflict, "Merge conflict")
	case sha == "":
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "commit": map[string]any{"message": msg}})
	}
}

var (
	errNoBase = errors.New("base does not exist")
	errNoHead = errors.New("head does not exist")
)

// Merge merges head (a branch or a commit) into branch base of
// owner/repo as GitHub's merges endpoint does, for Repo.Merge: a merge
// commit with base's head and head as parents, made with git merge-tree,
// and the branch moved to it only if nobody moved it meanwhile.
func (g *GitRemote) Merge(owner, repo, base, head, message string) (string, bool, error) {
	dir := g.Dir(owner, repo)
	rev := func(name string) string {
		out, err := gitCmd(dir, "rev-parse", "--verify", "-q", name+"^{commit}").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	old, theirs := rev("refs/heads/"+base), rev(head)
	switch {
	case old == "":
		return "", false, errNoBase
	case theirs == "":
		return "", false, errNoHead
	case gitCmd(dir, "merge-base", "--is-ancestor", theirs, old).Run() == nil:
		return "", false, nil
	}
	out, err := gitCmd(dir, "merge-tree", "--write-tree", old, theirs).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	tree, _, _ := strings.Cut(string(out), "\n")
	commit, err := gitCmd(dir, "commit-tree", tree, "-p", old, "-p", theirs, "-m", message).Output()
	if err != nil {
		return "", false, err
	}
	sha := strings.TrimSpace(string(commit))
	if err := gitCmd(dir, "update-ref", "refs/heads/"+base, sha, old).Run(); err != nil {
		return "", false, err
	}
	return sha, false, nil
}

// requestReviewers answers POST requested_reviewers as GitHub does: 201
// with the pull request, 422 "Review cannot be requested from pull
// request author." for its author, and 422 for a login that is not a
// collaborator (no permission set with SetPermission) or a team slug
// without access (none given with AddTeam).
func (s *Server) requestReviewers(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Reviewers []string `json:"reviewers"`
		Teams     []string `json:"team_reviewers"`
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
	for _, login := range req.Reviewers {
		switch {
		case strings.EqualFold(login, p.Author):
			fail(w, http.StatusUnprocessableEntity, "Review cannot be requested from pull request author.")
			return
		case slices.Contains([]string{"", "none"}, s.perms[strings.ToLower(p.Owner+"/"+p.Repo+"/"+login)]):
			fail(w, http.StatusUnprocessableEntity, "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the "+p.Owner+"/"+p.Repo+" repository.")
			return
		}
	}
	for _, slug := range req.Teams {
		if !s.teams[strings.ToLower(p.Owner+"/"+p.Repo+"/"+slug)] {
			fail(w, http.StatusUnprocessableEntity, "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the "+p.Owner+"/"+p.Repo+" repository.")
			return
		}
	}
	for _, slug := range req.Teams {
		if !slices.Contains(p.TeamReviewers, slug) {
			p.TeamReviewers = append(p.TeamReviewers, slug)
		}
	}
	for _, login := range req.Reviewers {
		if !slices.Contains(p.Reviewers, login) {
			p.Reviewers = append(p.Reviewers, login)
		}
	}
	writeJSON(w, http.StatusCreated, s.pullJSON(p))
}
