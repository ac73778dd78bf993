package githubtest

import (
	"net/http"
	"strings"
)

// attachment is a file uploaded to an issue (AddAttachment).
type attachment struct {
	contentType string
	data        []byte
}

// AddAttachment serves data as an issue attachment at
// /user-attachments/assets/{id} on the fake's own host, as a GitHub
// Enterprise Server serves attachments on its web host, and returns the
// URL an issue links. Like a private repository's attachment it is
// served only to a request carrying a valid installation token ("token"
// or "Bearer"); any other gets 404, as GitHub hides what it will not
// show.
func (s *Server) AddAttachment(id, contentType string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attachments == nil {
		s.attachments = map[string]attachment{}
	}
	s.attachments[id] = attachment{contentType, data}
	return s.URL + "user-attachments/assets/" + id
}

func (s *Server) getAttachment(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(auth, "token ")
	}
	s.mu.Lock()
	_, known := s.tokens[tok]
	a, found := s.attachments[r.PathValue("id")]
	s.mu.Unlock()
	if !ok || !known || !found {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	_, _ = w.Write(a.data)
}
