package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

type checkRunReq struct {
	Name       string  `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     *struct {
		Title       string            `json:"title"`
		Summary     string            `json:"summary"`
		Text        string            `json:"text"`
		Annotations []json.RawMessage `json:"annotations"`
	} `json:"output"`
}

func (c *CheckRun) apply(req checkRunReq) error {
	if req.Name != "" {
		c.Name = req.Name
	}
	if req.Status != nil {
		c.Status = *req.Status
	}
	if req.Conclusion != nil {
		c.Conclusion = *req.Conclusion
		c.Status = "completed"
	}
	if o := req.Output; o != nil {
		if len(o.Annotations) > MaxAnnotations {
			return fmt.Errorf("at most %d annotations per request, got %d", MaxAnnotations, len(o.Annotations))
		}
		if chars(o.Summary) > MaxCheckRunText {
			return fmt.Errorf("output.summary is too long (maximum is %d characters)", MaxCheckRunText)
		}
		if chars(o.Text) > MaxCheckRunText {
			return fmt.Errorf("output.text is too long (maximum is %d characters)", MaxCheckRunText)
		}
		c.Title, c.Summary = o.Title, o.Summary
		c.Annotations += len(o.Annotations)
	}
	c.Writes++
	return nil
}

func (s *Server) checkRunJSON(c *CheckRun) map[string]any {
	app := map[string]any{"id": AppID, "slug": AppSlug}
	if c.App != "" {
		app = map[string]any{"id": c.AppID, "slug": c.App}
	}
	return map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "status": c.Status, "conclusion": c.Conclusion, "app": app,
		"html_url": fmt.Sprintf("%s/%s/%s/runs/%d", s.web, c.Owner, c.Repo, c.ID),
		"output":   map[string]any{"title": c.Title, "summary": c.Summary, "text": c.Text, "annotations_count": c.Annotations}}
}

// findCheckRun returns the check run id of the request's repository.
func (s *Server) findCheckRun(r *http.Request, id int64) *CheckRun {
	for _, c := range s.checkRuns {
		if c.ID == id && sameRepo(c.Owner, c.Repo, r.PathValue("owner"), r.PathValue("repo")) {
			return c
		}
	}
	return nil
}

func (s *Server) listAnnotations(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	s.mu.Lock()
	c := s.findCheckRun(r, id)
	var all []map[string]any
	if c != nil {
		for _, a := range c.AnnotationList {
			all = append(all, map[string]any{"path": a.Path, "start_line": a.Line, "end_line": a.Line, "annotation_level": a.Level, "message": a.Message})
		}
	}
	s.mu.Unlock()
	if c == nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	writePage(w, r, all)
}

// jobLogs answers as GitHub does: 302 to a download URL, or 404 for a
// run that is not an Actions job (or has no log).
func (s *Server) jobLogs(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	s.mu.Lock()
	c := s.findCheckRun(r, id)
	s.mu.Unlock()
	if c == nil || c.App != "github-actions" || c.Log == "" {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s%d", s.logs, id))
	w.WriteHeader(http.StatusFound)
}

func (s *Server) downloadJobLog(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	s.mu.Lock()
	var log string
	for _, c := range s.checkRuns {
		if c.ID == id {
			log = c.Log
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, log)
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) {
	var req checkRunReq
	if !readJSON(w, r, &req) {
		return
	}
	if req.Name == "" || len(req.HeadSHA) != 40 {
		fail(w, http.StatusUnprocessableEntity, "Validation Failed: name and a 40-character head_sha are required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c := &CheckRun{ID: s.nextID, Owner: r.PathValue("owner"), Repo: r.PathValue("repo"), HeadSHA: req.HeadSHA, Status: "queued"}
	if err := c.apply(req); err != nil {
		fail(w, http.StatusUnprocessableEntity, "Validation Failed: "+err.Error())
		return
	}
	s.checkRuns = append(s.checkRuns, c)
	writeJSON(w, http.StatusCreated, s.checkRunJSON(c))
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	id, ok := number(w, r, "id")
	if !ok {
		return
	}
	var req checkRunReq
	if !readJSON(w, r, &req) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.checkRuns {
		if c.ID == id && sameRepo(c.Owner, c.Repo, r.PathValue("owner"), r.PathValue("repo")) {
			if err := c.apply(req); err != nil {
				fail(w, http.StatusUnprocessableEntity, "Validation Failed: "+err.Error())
				return
			}
			writeJSON(w, http.StatusOK, s.checkRunJSON(c))
			return
		}
	}
	fail(w, http.StatusNotFound, "Not Found")
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("check_name")
	var runs []map[string]any
	s.mu.Lock()
	for _, c := range s.checkRuns {
		if sameRepo(c.Owner, c.Repo, r.PathValue("owner"), r.PathValue("repo")) && c.HeadSHA == r.PathValue("sha") && (name == "" || c.Name == name) {
			runs = append(runs, s.checkRunJSON(c))
		}
	}
	s.mu.Unlock()
	if runs == nil {
		runs = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": runs})
}
