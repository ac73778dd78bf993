package githubapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// ActionsSlug is the slug of GitHub Actions' app: its check runs are jobs
// whose logs the Actions API serves under the check run's ID.
const ActionsSlug = "github-actions"

// Bounds on what FailedChecks reads of one check run.
const (
	// MaxCIAnnotations is how many annotations are read per check run.
	MaxCIAnnotations = 20
	// MaxCILogBytes is how much of the end of an Actions job's log is
	// kept: the failing step is near the end.
	MaxCILogBytes = 1 << 20
)

// FailedCheck is a check run of the repository's own CI that failed.
type FailedCheck struct {
	ID   int64
	Name string
	// App is the slug of the app that ran it (ActionsSlug for Actions).
	App        string
	Conclusion string
	URL        string // html_url
	// Title, Summary and Text are the check run's output.
	Title, Summary, Text string
	// Annotations are "path:line: level: message", at most
	// MaxCIAnnotations.
	Annotations []string
	// Log is the end of an Actions job's log (at most MaxCILogBytes); ""
	// for other apps or when it could not be read (LogErr says why).
	Log    string
	LogErr string
}

// failedConclusions are the conclusions a CI fix acts on.
var failedConclusions = map[string]bool{"failure": true, "timed_out": true, "startup_failure": true}

// FailedChecks lists the completed check runs on sha that failed, leaving
// out this app's own, with their output, annotations and, for Actions,
// the job's log. A log or annotations that cannot be read (an
// installation that has not granted actions: read, an expired log) are
// said in LogErr, not an error: the rest is still worth a fix attempt.
func (a *App) FailedChecks(ctx context.Context, repo tasks.Issue, sha string) ([]FailedCheck, error) {
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return nil, err
	}
	opts := &github.ListCheckRunsOptions{Filter: github.String("latest"), ListOptions: github.ListOptions{PerPage: 100}}
	var out []FailedCheck
	for {
		res, resp, err := c.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Repo, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("list check runs on %s: %w", sha, err)
		}
		for _, r := range res.CheckRuns {
			if r.GetStatus() != "completed" || !failedConclusions[r.GetConclusion()] || r.GetApp().GetID() == a.ID() {
				continue
			}
			out = append(out, a.failedCheck(ctx, c, repo, r))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (a *App) failedCheck(ctx context.Context, c *github.Client, repo tasks.Issue, r *github.CheckRun) FailedCheck {
	f := FailedCheck{ID: r.GetID(), Name: r.GetName(), App: r.GetApp().GetSlug(), Conclusion: r.GetConclusion(), URL: r.GetHTMLURL(),
		Title: r.GetOutput().GetTitle(), Summary: r.GetOutput().GetSummary(), Text: r.GetOutput().GetText()}
	if r.GetOutput().GetAnnotationsCount() > 0 {
		anns, _, err := c.Checks.ListCheckRunAnnotations(ctx, repo.Owner, repo.Repo, f.ID, &github.ListOptions{PerPage: MaxCIAnnotations})
		if err != nil {
			f.LogErr = "annotations: " + err.Error()
		}
		for _, an := range anns {
			f.Annotations = append(f.Annotations, fmt.Sprintf("%s:%d: %s: %s", an.GetPath(), an.GetStartLine(), an.GetAnnotationLevel(), an.GetMessage()))
		}
	}
	if f.App == ActionsSlug {
		log, err := a.jobLog(ctx, c, repo, f.ID)
		if err != nil {
			f.LogErr = strings.TrimPrefix(f.LogErr+"; ", "; ") + "log: " + err.Error()
		}
		f.Log = log
	}
	return f
}

// jobLog reads the end of an Actions job's log: the API answers with a
// redirect to a short-lived download URL, read without the token.
func (a *App) jobLog(ctx context.Context, c *github.Client, repo tasks.Issue, jobID int64) (string, error) {
	u, _, err := c.Actions.GetWorkflowJobLogs(ctx, repo.Owner, repo.Repo, jobID, 0)
	if err != nil {
		return "", fmt.Errorf("job %d: %w", jobID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("download job %d's log: %w", jobID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download job %d's log: %s", jobID, resp.Status)
	}
	return tail(resp.Body, MaxCILogBytes)
}

// tail reads r to its end and keeps its last n bytes.
func tail(r io.Reader, n int) (string, error) {
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 64<<10)
	for {
		k, err := r.Read(chunk)
		buf = append(buf, chunk[:k]...)
		if len(buf) > 2*n {
			buf = append(buf[:0], buf[len(buf)-n:]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if len(buf) > n {
		buf = buf[len(buf)-n:]
	}
	return string(buf), nil
}

// ID is the app's ID.
func (a *App) ID() int64 { return a.appTransport.AppID() }
