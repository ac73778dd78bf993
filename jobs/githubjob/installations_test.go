package githubjob

import (
	"testing"

	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// TestExecutorByInstallation: a job of an installation that brings its
// own model runs on that installation's executor; any other on the
// operator's.
func TestExecutorByInstallation(t *testing.T) {
	operator, seven, eight := &pipeline.Executor{}, &pipeline.Executor{ModelSource: "installation 7"}, &pipeline.Executor{ModelSource: "installation 8"}
	p := &Pipeline{Executor: operator, Installations: map[int64]*pipeline.Executor{7: seven, 8: eight}}
	for inst, want := range map[int64]*pipeline.Executor{7: seven, 8: eight, 9: operator} {
		if got := p.executor(tasks.Issue{InstallationID: inst, Owner: "acme", Repo: "r", Number: 1}); got != want {
			t.Errorf("installation %d ran on %q, want %q", inst, got.ModelSource, want.ModelSource)
		}
	}
	if got := (&Pipeline{Executor: operator}).executor(tasks.Issue{InstallationID: 7}); got != operator {
		t.Errorf("without installations, installation 7 ran on %q", got.ModelSource)
	}
}
