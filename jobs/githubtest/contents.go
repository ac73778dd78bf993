package githubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strings"
	"testing"
)

// getContents answers GET contents/{path} for a file as GitHub does: the
// file's bytes base64-encoded in lines of 60 characters, its blob SHA,
// name, path and size; ?ref= names a branch or commit, the default branch
// without it. An unknown repository, a repository without Repo.File, or
// a path it does not hold answers 404 "Not Found".
func (s *Server) getContents(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rp := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
	s.mu.Unlock()
	if rp == nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = rp.DefaultBranch
	}
	p := r.PathValue("path")
	data, ok := s.fileAt(rp, ref, p)
	if !ok {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	enc := base64.StdEncoding.EncodeToString(data)
	var lines []string
	for len(enc) > 60 {
		lines, enc = append(lines, enc[:60]), enc[60:]
	}
	lines = append(lines, enc)
	blob := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(data))), data...))
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "file", "encoding": "base64", "size": len(data), "name": path.Base(p), "path": p,
		"content": strings.Join(lines, "\n") + "\n", "sha": hex.EncodeToString(blob[:]),
	})
}

// fileAt is path's bytes at ref from rp.File, or from rp.Files on the
// default branch when File is nil.
func (s *Server) fileAt(rp *Repo, ref, p string) ([]byte, bool) {
	if rp.File != nil {
		return rp.File(ref, p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text, ok := rp.Files[p]
	return []byte(text), ok && ref == rp.DefaultBranch
}

// File reads path at ref (a branch or commit) of owner/repo, for
// Repo.File; ok is false when ref does not hold it.
func (g *GitRemote) File(t testing.TB, owner, repo, ref, path string) ([]byte, bool) {
	t.Helper()
	out, err := gitCmd(g.Dir(owner, repo), "show", ref+":"+path).Output()
	if err != nil {
		return nil, false
	}
	return out, true
}
