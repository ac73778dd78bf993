package githubapi_test

import (
	"context"
	"testing"

	"github.com/patchwright/patchwright/jobs/githubtest"
)

// Advisories asks GET /advisories with the ecosystem and the package at
// its version, as the installation, and reads GitHub's answer; another
// version or ecosystem has none.
func TestAdvisories(t *testing.T) {
	e := newEnv(t)
	e.fake.AddAdvisory(githubtest.Advisory{GHSAID: "GHSA-35jh-r3h4-6jhm", Severity: "high", Summary: "Command Injection in lodash", Ecosystem: "npm", Package: "lodash", Versions: []string{"4.17.20"}})
	ctx := context.Background()
	list, err := e.app.Advisories(ctx, e.repo, "npm", "lodash@4.17.20")
	if err != nil || len(list) != 1 {
		t.Fatalf("%+v, %v; want the advisory", list, err)
	}
	if a := list[0]; a.ID != "GHSA-35jh-r3h4-6jhm" || a.Severity != "high" || a.Summary != "Command Injection in lodash" || a.URL != "https://github.com/advisories/GHSA-35jh-r3h4-6jhm" {
		t.Errorf("advisory %+v", a)
	}
	for _, q := range [][2]string{{"npm", "lodash@4.17.21"}, {"pip", "lodash@4.17.20"}, {"npm", "left-pad@1.3.0"}} {
		if list, err := e.app.Advisories(ctx, e.repo, q[0], q[1]); err != nil || len(list) != 0 {
			t.Errorf("%s %s: %+v, %v; want none", q[0], q[1], list, err)
		}
	}
}
