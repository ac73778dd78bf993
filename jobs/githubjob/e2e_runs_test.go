package githubjob_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/outcomes"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/webhook/basicauth"
	"github.com/patchwright/patchwright/webhook/runsui"
)

// TestRunListedEndToEnd: a labelled issue runs through the GitHub fake,
// real Redis and the sandbox, and its run is then in the runs dashboard:
// one summary under every index the dashboard reads (all runs, the
// installation's, the repository's) with its repository, issue, title,
// outcome, cost and pull request, and a row on /runs that links its run
// page. Then `/agent retry` updates that pull request, and its run is
// listed too, with the same pull request.
func TestRunListedEndToEnd(t *testing.T) {
	sandboxtest.EndToEnd(t)
	ctx := context.Background()
	e := newE2E(t,
		call("read_file", `{"path":"greeting.txt"}`),
		call("edit", `{"edits":[{"path":"greeting.txt","old_text":"helo","new_text":"hello"}]}`),
		call("finish", `{"summary":"Fixed the spelling in greeting.txt."}`),
		// The retry.
		call("write_file", `{"path":"NOTES.md","content":"Spelling fixed.\n"}`),
		call("finish", `{"summary":"Added NOTES.md as asked."}`),
	)
	runs := &runstore.Store{Redis: e.rdb}
	outs := &outcomes.Store{Redis: e.rdb}
	e.pipe.Runs, e.pipe.Outcomes = runs, outs
	e.startWorker()
	if code := e.label(1, "delivery-runs-1"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-runs-1", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve task ended %s: %s", info.State, info.LastErr)
	}
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests, want 1", len(pulls))
	}
	first := listedRun(t, runs, pulls[0])

	if code := e.comment(pulls[0].Number, true, "/agent retry add a NOTES.md", "delivery-runs-2"); code != http.StatusAccepted {
		t.Fatalf("retry: %d, want 202", code)
	}
	if info := e.waitTask("delivery-runs-2", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("retry task ended %s: %s", info.State, info.LastErr)
	}
	pulls = e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 {
		t.Fatalf("%d pull requests after the retry, want the one updated", len(pulls))
	}
	all, _, err := runs.Scan(ctx, runstore.Query{Key: runstore.IndexAll, Count: 10})
	if err != nil || len(all) != 2 || all[1].ID != first.ID {
		t.Fatalf("the index of all runs holds %+v, %v; want the retry, then the first run", all, err)
	}
	if retry := all[0]; retry.PR != pulls[0].Number || retry.Outcome != "verified" || retry.CostUSD == nil || retry.EndedAt.IsZero() {
		t.Errorf("the retry's summary %+v, want the pull request #%d it updated, its outcome and cost", retry, pulls[0].Number)
	}

	// The dashboard, as the operator reads it.
	const password = "a long operator password"
	h, err := runsui.New(runsui.Config{Runs: runs, Outcomes: outs, Password: password,
		Link: func(id string) string { return "https://patchwright.example/runs/" + id + "?sig=test" }})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/runs?repo="+owner+"/"+repoName, nil)
	req.SetBasicAuth(basicauth.DefaultUsername, password)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	page := rec.Body.String()
	for _, want := range []string{
		`<td class="repo">` + owner + "/" + repoName + "</td>",
		fmt.Sprintf(`<td class="pr">#%d `, pulls[0].Number),
		fmt.Sprintf(`<td class="num cost">$%.2f</td>`, *first.CostUSD),
		`href="https://patchwright.example/runs/` + first.ID + `?sig=test"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/runs (%d) lacks %q:\n%s", rec.Code, want, page)
		}
	}
}

// listedRun checks that the run that published pr is the one summary
// under each index the dashboard reads, and returns it.
func listedRun(t *testing.T, runs *runstore.Store, pr githubtest.Pull) runstore.Summary {
	t.Helper()
	var got runstore.Summary
	for _, key := range []string{runstore.IndexAll, runstore.IndexKeyOfInstallation(e2eInst), runstore.IndexKeyOfRepo(owner + "/" + repoName)} {
		list, read, err := runs.Scan(context.Background(), runstore.Query{Key: key, Count: 10})
		if err != nil || read != 1 || len(list) != 1 {
			t.Fatalf("index %s: %+v (read %d), %v; want one run", key, list, read, err)
		}
		got = list[0]
	}
	switch {
	case got.Repo != owner+"/"+repoName || got.Installation != e2eInst || got.Issue != 1 || got.Title != "Greeting is misspelled":
		t.Errorf("summary %+v: want %s/%s#1 of installation %d, with its title", got, owner, repoName, e2eInst)
	case got.Outcome != "verified" || got.CostUSD == nil || got.EndedAt.IsZero():
		t.Errorf("summary %+v: want the outcome verified, a cost and an end", got)
	case got.PR != pr.Number:
		t.Errorf("summary %+v: want the pull request #%d", got, pr.Number)
	case !strings.Contains(pr.Body, "/runs/"+got.ID):
		t.Errorf("the pull request's body does not link run %s:\n%s", got.ID, pr.Body)
	}
	if got.CostUSD == nil {
		t.FailNow() // the dashboard's check reads the cost
	}
	return got
}
