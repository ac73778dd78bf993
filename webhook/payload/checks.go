package payload

import "encoding/json"

// CheckEvent is a check_suite, check_run or workflow_run event: one result
// of a repository's CI on a commit.
type CheckEvent struct {
	Action string
	// ID is check_suite.id, check_run.id or workflow_run.id.
	ID int64
	// Name is the check run's or the workflow's name; for a check suite,
	// the name of the app that ran it.
	Name       string
	HeadBranch string
	HeadSHA    string
	Status     string
	// Conclusion is GitHub's: success, failure, timed_out, cancelled,
	// neutral, skipped, action_required, stale or startup_failure; ""
	// until completed.
	Conclusion string
	// AppSlug and AppID are the app that made the suite or the run
	// ("github-actions" for Actions); "" and 0 for a workflow_run, which
	// is always Actions'.
	AppSlug string
	AppID   int64
	// PullRequests are the numbers of the pull requests whose head is
	// HeadSHA on HeadBranch (empty for a fork's).
	PullRequests []int
	Repo         Repo
	Sender       User
	Installation int64
}

var checkSuitePaths = append([]string{
	"action", "check_suite.id", "check_suite.app.name", "check_suite.head_branch", "check_suite.head_sha",
	"check_suite.status", "check_suite.conclusion", "check_suite.app.slug", "check_suite.app.id", "check_suite.pull_requests",
}, whereWho...)

var checkRunPaths = append([]string{
	"action", "check_run.id", "check_run.name", "check_run.check_suite.head_branch", "check_run.head_sha",
	"check_run.status", "check_run.conclusion", "check_run.app.slug", "check_run.app.id", "check_run.pull_requests",
}, whereWho...)

var workflowRunPaths = append([]string{
	"action", "workflow_run.id", "workflow_run.name", "workflow_run.head_branch", "workflow_run.head_sha",
	"workflow_run.status", "workflow_run.conclusion", "workflow_run.pull_requests",
}, whereWho...)

// ParseCheckEvent decodes a check_suite, check_run or workflow_run event.
func ParseCheckEvent(event string, body []byte) (CheckEvent, error) {
	return Scan(event, body).CheckEvent()
}

// CheckEvent decodes a scanned check_suite, check_run or workflow_run
// event.
func (doc *Doc) CheckEvent() (CheckEvent, error) {
	var e CheckEvent
	want := doc.event
	switch want {
	case "check_suite", "check_run", "workflow_run":
	default:
		want = "check_suite"
	}
	d, err := doc.decoder(want)
	if err != nil {
		return e, err
	}
	d.str(&e.Action)
	d.int64(&e.ID)
	d.str(&e.Name)
	d.str(&e.HeadBranch)
	d.str(&e.HeadSHA)
	d.str(&e.Status)
	d.str(&e.Conclusion)
	if want != "workflow_run" {
		d.str(&e.AppSlug)
		d.int64(&e.AppID)
	}
	d.pullNumbers(&e.PullRequests)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

// pullNumbers decodes an array of pull-request objects into their numbers.
func (d *decoder) pullNumbers(dst *[]int) {
	r := d.next()
	if r == nil {
		return
	}
	var ps []struct {
		Number int `json:"number"`
	}
	if err := json.Unmarshal(r, &ps); err != nil {
		d.fail("an array of pull requests", r)
		return
	}
	for _, p := range ps {
		*dst = append(*dst, p.Number)
	}
}
