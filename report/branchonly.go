package report

import (
	"strings"

	"github.com/patchwright/patchwright/report/marker"
)

// BranchOnly is the issue's status comment for a run whose change was
// pushed where the operator's policy allows no pull request: the status
// marker, a note naming the branch, then body, the pull request's body
// the run rendered. branch is Patchwright's own (agent/issue-N); it is
// shown as code all the same. A body that would pass MaxBody with the
// note loses its end, which the run log keeps.
func BranchOnly(issue int, branch, body string) string {
	out := marker.Status(issue) + "\n> [!NOTE]\n> The operator's policy allows no pull requests for this repository: the change was pushed to the branch " +
		code(branch) + " and no pull request was opened. Below is the report a pull request would have had.\n\n" + body
	if len(out) > MaxBody {
		out = strings.ToValidUTF8(out[:MaxBody], "")
	}
	return out
}
