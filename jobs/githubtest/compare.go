package githubtest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The compare and single-commit endpoints. A repository a GitRemote holds
// is read from its bare repository, as GitHub reads its own: whatever
// made a commit (a push, the Git Data API, the merges endpoint), compare
// sees it, with the merge base a three-way merge needs. A repository with
// no remote is answered from its Log, which knows no merge base.

// compare answers GET compare/{base}...{head}.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	rp, ok := s.repo(w, r)
	if !ok {
		return
	}
	base, head, ok := strings.Cut(r.PathValue("basehead"), "...")
	switch dir := bareOf(rp); {
	case !ok:
		fail(w, http.StatusNotFound, "Not Found")
	case dir != "":
		compareGit(w, dir, base, head)
	case rp.Log != nil:
		compareLog(w, rp.Log(base, head))
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

// compareGit answers compare as GitHub does from the bare repository at
// dir: the commits of head its merge base with base lacks, oldest first;
// the files that changed from the merge base to head; how far head is
// ahead of and behind base, and the status those make. A ref or SHA the
// repository lacks is 404 "Not Found"; two histories with no common
// commit are 404 "No common ancestor between base and head.".
func compareGit(w http.ResponseWriter, dir, base, head string) {
	b, h := revCommit(dir, base), revCommit(dir, head)
	if b == "" || h == "" {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	mb, err := bare(dir, nil, nil, "merge-base", b, h)
	if err != nil || mb == "" {
		fail(w, http.StatusNotFound, fmt.Sprintf("No common ancestor between %s and %s.", base, head))
		return
	}
	out, err := compareOut(dir, b, h, mb)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// compareOut is compare's body for commits b and h whose merge base is mb.
func compareOut(dir, b, h, mb string) (map[string]any, error) {
	ahead, err := gitLog(dir, b+".."+h)
	if err != nil {
		return nil, err
	}
	behindOut, err := bare(dir, nil, nil, "rev-list", "--count", h+".."+b)
	if err != nil {
		return nil, err
	}
	behind, _ := strconv.Atoi(behindOut)
	ends, err := gitLog(dir, "--no-walk", b, mb)
	if err != nil || len(ends) == 0 {
		return nil, fmt.Errorf("read %s and %s: %v", b, mb, err)
	}
	byName := map[string]GitCommit{}
	for _, c := range ends {
		byName[c.SHA] = c
	}
	files, err := diffFiles(dir, mb, h)
	if err != nil {
		return nil, err
	}
	list := make([]map[string]any, len(ahead))
	for i, c := range ahead {
		list[i] = commitJSON(c, false)
	}
	return map[string]any{
		"status": compareStatus(len(ahead), behind), "ahead_by": len(ahead), "behind_by": behind,
		"total_commits": len(ahead), "commits": list, "files": files,
		"base_commit":       commitJSON(byName[b], false),
		"merge_base_commit": commitJSON(byName[mb], false),
	}, nil
}

// compareStatus is GitHub's word for how head stands to base.
func compareStatus(ahead, behind int) string {
	switch {
	case ahead == 0 && behind == 0:
		return "identical"
	case behind == 0:
		return "ahead"
	case ahead == 0:
		return "behind"
	}
	return "diverged"
}

// compareLog answers compare from a Log's commits, which say nothing of
// the other side: the status is "ahead" and no merge base is given.
func compareLog(w http.ResponseWriter, commits []GitCommit) {
	list := make([]map[string]any, len(commits))
	seen := map[string]bool{}
	var files []map[string]any
	for i, c := range commits {
		list[i] = commitJSON(c, false)
		for _, f := range c.Files {
			if !seen[f] {
				seen[f] = true
				files = append(files, map[string]any{"filename": f, "status": "modified"})
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ahead", "ahead_by": len(list), "total_commits": len(list), "commits": list, "files": files})
}

// getCommit answers GET commits/{sha} with the commit's files (a merge's
// against its first parent, as GitHub lists them).
func (s *Server) getCommit(w http.ResponseWriter, r *http.Request) {
	rp, ok := s.repo(w, r)
	if !ok {
		return
	}
	sha := r.PathValue("sha")
	var cs []GitCommit
	switch dir := bareOf(rp); {
	case dir != "":
		if c := revCommit(dir, sha); c != "" {
			cs, _ = gitLog(dir, "-1", c)
		}
	case rp.Log != nil:
		cs = rp.Log("", sha)
	default:
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	if len(cs) != 1 {
		fail(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha)
		return
	}
	writeJSON(w, http.StatusOK, commitJSON(cs[0], true))
}

// revCommit is the commit name (a branch, a tag or a SHA) names in the
// bare repository at dir; "" when it names none.
func revCommit(dir, name string) string {
	if name == "" || strings.HasPrefix(name, "-") {
		return ""
	}
	sha, err := bare(dir, nil, nil, "rev-parse", "--verify", "-q", name+"^{commit}")
	if err != nil {
		return ""
	}
	return sha
}

// diffFiles are GitHub's files of a comparison: each path that differs
// from commit a to commit b, with its status.
func diffFiles(dir, a, b string) ([]map[string]any, error) {
	out, err := bare(dir, nil, nil, "diff", "--name-status", "--no-renames", "-z", a, b)
	if err != nil {
		return nil, err
	}
	status := map[string]string{"A": "added", "D": "removed", "M": "modified", "T": "changed"}
	files := []map[string]any{}
	parts := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		files = append(files, map[string]any{"filename": parts[i+1], "status": cmpOr(status[parts[i]], "modified")})
	}
	return files, nil
}

// gitLog lists the commits git log selects with args in the bare
// repository at dir, oldest first, each with the files it changed (a
// merge's against its first parent). Commits are linked to no account.
func gitLog(dir string, args ...string) ([]GitCommit, error) {
	args = append([]string{"log", "--reverse", "--format=%x00%H%x00%an%x00%B%x00", "--name-only",
		"--diff-merges=first-parent"}, args...)
	out, err := gitCmd(dir, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	// Each commit is "\x00SHA\x00name\x00message\x00\nfile\nfile\n".
	parts := strings.Split(string(out), "\x00")
	var cs []GitCommit
	for i := 1; i+3 < len(parts); i += 4 {
		c := GitCommit{SHA: parts[i], Name: parts[i+1], Message: strings.TrimSpace(parts[i+2])}
		for _, f := range strings.Split(parts[i+3], "\n") {
			if f != "" {
				c.Files = append(c.Files, f)
			}
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// commitJSON is GitHub's commit object: author null when the commit is
// linked to no account; files only on the single-commit endpoint.
func commitJSON(c GitCommit, withFiles bool) map[string]any {
	m := map[string]any{
		"sha":    c.SHA,
		"commit": map[string]any{"message": c.Message, "author": map[string]any{"name": c.Name}},
		"author": nil,
	}
	if c.Login != "" {
		m["author"] = map[string]any{"login": c.Login}
	}
	if withFiles {
		files := make([]map[string]any, len(c.Files))
		for i, f := range c.Files {
			files[i] = map[string]any{"filename": f, "status": "modified"}
		}
		m["files"] = files
	}
	return m
}
