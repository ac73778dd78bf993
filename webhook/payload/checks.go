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
	// PullHeadRepoIDs are the ids of those pull requests' head
	// repositories (pull_requests[].head.repo.id), in the same order.
	PullHeadRepoIDs []int64
	// RepoID is repository.id, the repository the event is about.
	RepoID int64
	// HeadRepoID is workflow_run.head_repository.id: the repository the
	// run's head commit came from, a fork's for a pull request from a
	// fork. 0 for check_suite and check_run, which do not say.
	HeadRepoID   int64
	Repo         Repo
	Sender       User
	Installation int64
}

var checkSuitePaths = append([]string{
	"action", "check_suite.id", "check_suite.app.name", "check_suite.head_branch", "check_suite.head_sha",
	"check_suite.status", "check_suite.conclusion", "check_suite.app.slug", "check_suite.app.id", "check_suite.pull_requests",
	"repository.id",
}, whereWho...)

var checkRunPaths = append([]string{
	"action", "check_run.id", "check_run.name", "check_run.check_suite.head_branch", "check_run.head_sha",
	"check_run.status", "check_run.conclusion", "check_run.app.slug", "check_run.app.id", "check_run.pull_requests",
	"repository.id",
}, whereWho...)

var workflowRunPaths = append([]string{
	"action", "workflow_run.id", "workflow_run.name", "workflow_run.head_branch", "workflow_run.head_sha",
	"workflow_run.status", "workflow_run.conclusion", "workflow_run.pull_requests",
	"repository.id", "workflow_run.head_repository.id",
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
	d.pulls(&e.PullRequests, &e.PullHeadRepoIDs)
	d.int64(&e.RepoID)
	if want == "workflow_run" {
		d.int64(&e.HeadRepoID)
	}
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}

// pulls decodes an array of pull-request objects into their numbers and
// their head repositories' ids (0 where absent).
func (d *decoder) pulls(numbers *[]int, headRepos *[]int64) {
	r := d.next()
	if r == nil {
		return
	}
	var ps []struct {
		Number int `json:"number"`
		Head   struct {
			Repo struct {
				ID int64 `json:"id"`
			} `json:"repo"`
		} `json:"head"`
	}
	if err := json.Unmarshal(r, &ps); err != nil {
		d.fail("an array of pull requests", r)
		return
	}
	for _, p := range ps {
		*numbers = append(*numbers, p.Number)
		*headRepos = append(*headRepos, p.Head.Repo.ID)
	}
}
