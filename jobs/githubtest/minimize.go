package githubtest

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

func commentNodeID(c *Comment) string { return fmt.Sprintf("IC_%d", c.ID) }

// classifierRE finds the classifier argument; classifiers are GitHub's
// ReportedContentClassifiers.
var classifierRE = regexp.MustCompile(`classifier:\s*([A-Z_]+)`)

var classifiers = map[string]bool{"SPAM": true, "ABUSE": true, "OFF_TOPIC": true, "OUTDATED": true, "DUPLICATE": true, "RESOLVED": true}

// minimizeComment answers GraphQL's minimizeComment(input: {subjectId,
// classifier}) on an issue comment as GitHub does: the comment stays,
// hidden, with isMinimized and a lower-case minimizedReason; an unknown
// node or classifier is a GraphQL error.
func (s *Server) minimizeComment(w http.ResponseWriter, req graphqlReq) {
	m := classifierRE.FindStringSubmatch(req.Query)
	if m == nil || !classifiers[m[1]] {
		graphqlError(w, "Argument 'classifier' on InputObject 'MinimizeCommentInput' has an invalid value")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if commentNodeID(c) == req.Variables.ID {
			c.Minimized = m[1]
			c.Minimizes++
			writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{
				"minimizedComment": map[string]any{"isMinimized": true, "minimizedReason": strings.ToLower(m[1])}}}})
			return
		}
	}
	graphqlError(w, fmt.Sprintf("Could not resolve to a node with the global id of '%s'", req.Variables.ID))
}
