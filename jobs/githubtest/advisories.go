package githubtest

import (
	"net/http"
	"slices"
	"strings"
)

// Advisory is a global security advisory the fake's GET /advisories
// returns for a package of an ecosystem ("npm", "go", "pip"…).
type Advisory struct {
	GHSAID, Severity, Summary string
	Ecosystem, Package        string
	// Versions are the affected versions, matched exactly against an
	// `affects` entry's "@version"; empty affects every version.
	Versions []string
}

// AddAdvisory adds an advisory to the fake's database.
func (s *Server) AddAdvisory(a Advisory) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advisories = append(s.advisories, a)
}

// listAdvisories is GET /advisories with `ecosystem` and `affects`
// (comma-separated "name" or "name@version"), as GitHub answers it: the
// advisories, each with its vulnerable packages. The fake pages nothing.
func (s *Server) listAdvisories(w http.ResponseWriter, r *http.Request) {
	eco := r.URL.Query().Get("ecosystem")
	affects := strings.Split(r.URL.Query().Get("affects"), ",")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, a := range s.advisories {
		if (eco != "" && a.Ecosystem != eco) || !slices.ContainsFunc(affects, a.affects) {
			continue
		}
		out = append(out, map[string]any{
			"ghsa_id": a.GHSAID, "summary": a.Summary, "severity": a.Severity, "type": "reviewed",
			"html_url": "https://github.com/advisories/" + a.GHSAID,
			"vulnerabilities": []map[string]any{{
				"package":                  map[string]any{"ecosystem": a.Ecosystem, "name": a.Package},
				"vulnerable_version_range": strings.Join(a.Versions, ", "),
			}},
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// affects reports whether the advisory affects one `affects` entry.
func (a Advisory) affects(entry string) bool {
	name, version, versioned := strings.Cut(strings.TrimSpace(entry), "@")
	if strings.HasPrefix(entry, "@") { // a scoped npm name
		name, version, versioned = strings.Cut(strings.TrimPrefix(entry, "@"), "@")
		name = "@" + name
	}
	if name != a.Package {
		return false
	}
	return !versioned || len(a.Versions) == 0 || slices.Contains(a.Versions, version)
}
