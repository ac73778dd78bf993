package githubjob_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/report/marker"

	"github.com/hibiken/asynq"

	"github.com/patchwright/patchwright/jobs/githubjob"
	"github.com/patchwright/patchwright/jobs/githubtest"
	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// pushMaster commits files to the default branch as a maintainer would
// and returns its new head.
func (e *e2e) pushMaster(t *testing.T, msg string, files map[string]string) string {
	work := t.TempDir()
	githubtest.Git(t, "", "clone", "-q", "-b", "master", e.remote.Dir(owner, repoName), work)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	githubtest.Git(t, work, "add", "-A")
	githubtest.Git(t, work, "commit", "-q", "-m", msg)
	githubtest.Git(t, work, "push", "-q", "origin", "master")
	return e.remote.Head(t, owner, repoName, "master")
}

// pushEvent delivers GitHub's push event for the default branch at after.
func (e *e2e) pushEvent(after, delivery string) int {
	return e.deliver("push", "push.json", delivery, func(m map[string]any) {
		m["ref"], m["after"], m["deleted"] = "refs/heads/master", after, false
		m["repository"].(map[string]any)["owner"].(map[string]any)["login"] = owner
		m["repository"].(map[string]any)["name"] = repoName
	})
}

// merges counts the merge requests the fake answered.
func (e *e2e) merges() int {
	n := 0
	for _, r := range e.fake.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/merges") {
			n++
		}
	}
	return n
}

// conflictComments are the pull request's comments that say a merge
// conflict.
func (e *e2e) conflictComments(pr int) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range e.fake.Comments(owner, repoName, pr) {
		if strings.Contains(c.Body, "could not merge") {
			out = append(out, c)
		}
	}
	return out
}

// The default branch moves under Patchwright's open pull request. Without
// a conflict the base is merged in (a merge commit of both heads), the
// body's pushed marker follows it, and the branch is checked again by one
// more attempt whose history says why; a redelivery of the push starts
// nothing. With a conflict nothing runs and the pull request says so
// once, however often the base moves again; `merge_conflicts: off` stops
// the updates before any merge is tried.
func TestDefaultBranchMovesUnderPullRequest(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(),
		// The check after the merge: nothing to change.
		call("finish", `{"summary":"The merged base broke nothing; no change needed."}`),
		// The conflict's resolution: a model that leaves the markers.
		call("finish", `{"summary":"Left the conflict as it is."}`),
		// `/agent rebase`: the same again.
		call("finish", `{"summary":"Left the conflict as it is."}`),
	)...)
	// Reviewers: whoever labels, and reviewers: (one of them no
	// collaborator, whom GitHub refuses without costing the others).
	e.fake.SetPermission(owner, repoName, "octocat", "write")
	e.pushMaster(t, "reviewers", map[string]string{".github/agent.yml": "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\n" +
		"reviewers: [stranger, octocat, Codertocat]\n"})
	e.startWorker()
	if code := e.label(1, "delivery-rebase-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-rebase-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pulls := e.fake.Pulls(owner, repoName)
	if len(pulls) != 1 || marker.ParsePushed(pulls[0].Body) != head {
		t.Fatalf("after the solve: %+v", pulls)
	}
	pr := pulls[0].Number
	if got := strings.Join(pulls[0].Reviewers, ","); got != owner+",octocat" {
		t.Errorf("reviewers asked: %q, want the labeller and octocat", got)
	}
	solveRequests := len(e.model.Requests())

	// A change elsewhere: merged cleanly and checked again.
	base := e.pushMaster(t, "docs", map[string]string{"README.md": "A greeting, spelled right.\n"})
	if code := e.pushEvent(base, "delivery-push-1"); code != http.StatusAccepted {
		t.Fatalf("push to the default branch: %d, want 202", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, base), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("update ended %s: %s", info.State, info.LastErr)
	}
	merged := e.remote.Head(t, owner, repoName, "agent/issue-1")
	dir := e.remote.Dir(owner, repoName)
	if parents := strings.Fields(githubtest.Git(t, dir, "rev-list", "--parents", "-n", "1", merged)); len(parents) != 3 || parents[1] != head || parents[2] != base {
		t.Fatalf("the branch's head %s has parents %v, want a merge of %s and %s", merged, parents[1:], head, base)
	}
	if got := githubtest.Git(t, dir, "show", merged+":README.md"); got != "A greeting, spelled right.\n" {
		t.Errorf("README.md on the merged branch: %q", got)
	}
	if n := len(e.model.Requests()); n != solveRequests+1 {
		t.Errorf("%d model requests, want %d: one check after the merge", n, solveRequests+1)
	}
	body := e.fake.Pulls(owner, repoName)[0].Body
	if marker.ParsePushed(body) != merged {
		t.Errorf("the body's pushed marker is %q, want the merge %s", marker.ParsePushed(body), merged)
	}
	if !strings.Contains(body, "base branch moved: master at "+base[:7]+" merged in") {
		t.Errorf("the body's history does not say the base moved:\n%s", body)
	}
	if !strings.Contains(body, "**Checked again on the merge of `master` into this branch (`"+merged[:7]+"`)**: 1 of 1 checks passed there") {
		t.Errorf("the body's verification does not show the checks on the merge:\n%s", body)
	}
	runs := e.fake.CheckRuns(owner, repoName, merged)
	if len(runs) != 1 || runs[0].Name != githubjob.CheckRunPrefix+"greeting" || runs[0].Conclusion != "success" {
		t.Errorf("check runs on the merge commit: %+v, want greeting passing", runs)
	}
	if st := e.statusComments(1); len(st) != 1 || !strings.Contains(st[0].Body, "merged in as "+merged[:7]) || !strings.Contains(st[0].Body, "/pull/") {
		t.Errorf("status after the update: %+v", st)
	}
	if code := e.pushEvent(base, "delivery-push-1-again"); code != http.StatusOK {
		t.Errorf("the same push delivered again: %d, want 200 (one update per base)", code)
	}

	// A change to the line the pull request fixed: a conflict, said once.
	mergesBefore := e.merges()
	conflicting := e.pushMaster(t, "greeting", map[string]string{"greeting.txt": "hi\n"})
	if code := e.pushEvent(conflicting, "delivery-push-2"); code != http.StatusAccepted {
		t.Fatalf("conflicting push: %d, want 202", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, conflicting), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("conflicting update ended %s: %s", info.State, info.LastErr)
	}
	later := e.pushMaster(t, "docs again", map[string]string{"README.md": "A greeting.\n"})
	if code := e.pushEvent(later, "delivery-push-3"); code != http.StatusAccepted {
		t.Fatalf("later push: %d, want 202", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, later), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("later update ended %s: %s", info.State, info.LastErr)
	}
	if got := e.merges() - mergesBefore; got != 2 {
		t.Errorf("%d merges tried, want 2", got)
	}
	said := e.conflictComments(pr)
	if len(said) != 1 || !strings.Contains(said[0].Body, "`master` ("+conflicting[:7]+")") || said[0].Author != githubtest.BotLogin {
		t.Errorf("conflict comments: %+v, want one naming master at %s", said, conflicting[:7])
	}
	if h := e.remote.Head(t, owner, repoName, "agent/issue-1"); h != merged {
		t.Errorf("the branch moved to %s on a conflict", h)
	}
	if n := len(e.model.Requests()); n != solveRequests+2 {
		t.Errorf("%d model requests, want %d: one resolution that left the markers, none on the same head again", n, solveRequests+2)
	}
	if !strings.Contains(said[0].Body, "left conflict markers in greeting.txt") {
		t.Errorf("the conflict comment does not say the markers were left:\n%s", said[0].Body)
	}

	// merge_conflicts: off: no merge is tried.
	cfg := "verify:\n  - name: greeting\n    run: grep -qx hello greeting.txt\nmerge_conflicts: off\n"
	off := e.pushMaster(t, "off", map[string]string{".github/agent.yml": cfg})
	mergesBefore = e.merges()
	if code := e.pushEvent(off, "delivery-push-4"); code != http.StatusAccepted {
		t.Fatalf("push turning updates off: %d, want 202 (the worker reads the setting)", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, off), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("update with merge_conflicts off ended %s: %s", info.State, info.LastErr)
	}
	if got := e.merges() - mergesBefore; got != 0 {
		t.Errorf("%d merges tried with merge_conflicts: off", got)
	}

	// `/agent rebase` from a writer is not turned off by merge_conflicts
	// and is answered, conflict and all, every time it is asked.
	if code := e.comment(pr, true, "/agent rebase", "delivery-rebase-command"); code != http.StatusAccepted {
		t.Fatalf("/agent rebase: %d, want 202", code)
	}
	if info := e.waitTask("delivery-rebase-command", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("/agent rebase ended %s: %s", info.State, info.LastErr)
	}
	said = e.conflictComments(pr)
	if len(said) != 2 || !strings.HasPrefix(strings.SplitN(said[1].Body, "\n", 2)[1], "@"+owner+" Patchwright could not merge `master` (master)") {
		t.Errorf("conflict comments after /agent rebase: %+v", said)
	}
}

// The default branch moved without a push event reaching Patchwright (a
// delivery lost, or an update deferred): the next check that completes on
// Patchwright's head finds the pull request behind (GitHub's
// mergeable_state) and the base branch is merged in and checked again,
// once for that head.
func TestCheckFindsPullRequestBehind(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(),
		call("finish", `{"summary":"The merged base broke nothing; no change needed."}`),
	)...)
	e.startWorker()
	if code := e.label(1, "delivery-behind-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-behind-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pr := e.fake.Pulls(owner, repoName)[0].Number
	if code := e.checkSuite(head, "success", "delivery-behind-clean"); code != http.StatusOK {
		t.Fatalf("a check on an up-to-date pull request: %d, want 200", code)
	}
	base := e.pushMaster(t, "docs", map[string]string{"README.md": "A greeting, spelled right.\n"})
	if code := e.checkSuite(head, "success", "delivery-behind-green"); code != http.StatusAccepted {
		t.Fatalf("a check on a pull request behind its base: %d, want 202", code)
	}
	if code := e.checkSuite(head, "success", "delivery-behind-again"); code != http.StatusOK {
		t.Errorf("another check on the same head: %d, want 200 (one update per head)", code)
	}
	if info := e.waitTask(tasks.MergeableUpdateID(issue1, pr, head), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("update ended %s: %s", info.State, info.LastErr)
	}
	merged := e.remote.Head(t, owner, repoName, "agent/issue-1")
	parents := strings.Fields(githubtest.Git(t, e.remote.Dir(owner, repoName), "rev-list", "--parents", "-n", "1", merged))
	if len(parents) != 3 || parents[1] != head || parents[2] != base {
		t.Fatalf("the branch's head %s has parents %v, want a merge of %s and %s", merged, parents[1:], head, base)
	}
	body := e.fake.Pulls(owner, repoName)[0].Body
	if marker.ParsePushed(body) != merged || !strings.Contains(body, "base branch moved: master merged in as "+merged[:7]) {
		t.Errorf("the body's pushed marker or history after the update:\n%s", body)
	}
}

// The default branch changes the line the pull request fixed: GitHub
// cannot merge it, so the worker lays the merge with markers, the model
// resolves them, the checks run again, and the merge commit (the head
// and the new base its parents) is pushed through the API; the history
// names the resolved file, and nothing is said as a conflict.
func TestConflictResolvedByTheModel(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(),
		call("read_file", `{"path":"greeting.txt"}`),
		call("write_file", `{"path":"greeting.txt","content":"hello\n"}`),
		call("finish", `{"summary":"Kept the pull request's spelling fix; the base's edit was to the same word."}`),
	)...)
	e.startWorker()
	if code := e.label(1, "delivery-resolve-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-resolve-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pr := e.fake.Pulls(owner, repoName)[0].Number
	base := e.pushMaster(t, "greeting", map[string]string{"greeting.txt": "hi\n"})
	if code := e.pushEvent(base, "delivery-resolve-push"); code != http.StatusAccepted {
		t.Fatalf("push: %d, want 202", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, base), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("resolution ended %s: %s", info.State, info.LastErr)
	}
	merged := e.remote.Head(t, owner, repoName, "agent/issue-1")
	dir := e.remote.Dir(owner, repoName)
	if parents := strings.Fields(githubtest.Git(t, dir, "rev-list", "--parents", "-n", "1", merged)); len(parents) != 3 || parents[1] != head || parents[2] != base {
		t.Fatalf("the branch's head %s has parents %v, want a merge of %s and %s", merged, parents[1:], head, base)
	}
	if got := githubtest.Git(t, dir, "show", merged+":greeting.txt"); got != "hello\n" {
		t.Errorf("greeting.txt on the merge: %q", got)
	}
	if !e.remote.Verified(owner, repoName, merged) {
		t.Errorf("the merge commit %s was not made (and signed) through the API", merged)
	}
	body := e.fake.Pulls(owner, repoName)[0].Body
	if marker.ParsePushed(body) != merged || !strings.Contains(body, "merged master ("+base[:7]+") with conflicts in greeting.txt): verified") {
		t.Errorf("the body's pushed marker or history after the resolution:\n%s", body)
	}
	if said := e.conflictComments(pr); len(said) != 0 {
		t.Errorf("a resolved conflict was said: %+v", said)
	}
	last := e.model.Requests()[len(e.model.Requests())-3]
	if !strings.Contains(string(last.Body), "these files hold conflict markers: greeting.txt") {
		t.Errorf("the model was not told which file holds markers")
	}
}

// A conflict's resolution under attack. The base brings a Makefile whose
// check passes whatever the tree holds, and the model's first
// resolution leaves the markers in the conflicted file while editing
// another: the checks pass, yet nothing is pushed, the outcome is
// failed, and the conflict is said naming the file. Asked again with
// `/agent rebase`, the model resolves the conflict and edits a file
// outside the conflicted set: the merge is pushed, the body's table names
// that file beside the resolved one, and its verification is the check
// the base's Makefile made, run on the merged tree (its output is the
// merge commit's check run).
func TestConflictResolutionUnderAttack(t *testing.T) {
	sandboxtest.EndToEnd(t)
	markers := "<<<<<<< pull request\\nhello\\n=======\\nhi\\n>>>>>>> master\\n"
	e := newE2E(t, append(fixGreeting(),
		call("read_file", `{"path":"greeting.txt"}`),
		call("read_file", `{"path":"README.md"}`),
		call("write_file", `{"path":"greeting.txt","content":"`+markers+`"}`),
		call("write_file", `{"path":"README.md","content":"Resolved, honest.\n"}`),
		call("finish", `{"summary":"Resolved every conflict."}`),
		call("read_file", `{"path":"greeting.txt"}`),
		call("write_file", `{"path":"greeting.txt","content":"hello\n"}`),
		call("write_file", `{"path":"notes.txt","content":"unasked\n"}`),
		call("finish", `{"summary":"Kept hello."}`),
	)...)
	e.startWorker()
	if code := e.label(1, "delivery-attack-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-attack-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	head := e.remote.Head(t, owner, repoName, "agent/issue-1")
	pr := e.fake.Pulls(owner, repoName)[0].Number
	bodyBefore := e.fake.Pulls(owner, repoName)[0].Body
	base := e.pushMaster(t, "greeting and a lenient check", map[string]string{
		"greeting.txt":      "hi\n",
		"Makefile":          "check:\n\t@echo the base Makefile ran\n",
		".github/agent.yml": "verify:\n  - name: make\n    run: make check\n",
	})
	if code := e.pushEvent(base, "delivery-attack-push"); code != http.StatusAccepted {
		t.Fatalf("push: %d, want 202", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, base), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("resolution ended %s: %s", info.State, info.LastErr)
	}
	if h := e.remote.Head(t, owner, repoName, "agent/issue-1"); h != head {
		t.Fatalf("a resolution that left markers moved the branch to %s", h)
	}
	said := e.conflictComments(pr)
	if len(said) != 1 || !strings.Contains(said[0].Body, "left conflict markers in greeting.txt") {
		t.Fatalf("conflict comments: %+v, want one naming the markers in greeting.txt", said)
	}
	body := e.fake.Pulls(owner, repoName)[0].Body
	if verification(body) != verification(bodyBefore) || !strings.Contains(body, "): failed, conflict markers are left in greeting.txt, so the merge was not pushed") {
		t.Errorf("after markers were left, the body's verification changed or its history does not say why:\n%s", body)
	}
	if st := e.statusComments(1); len(st) != 1 || !strings.Contains(st[0].Body, "Outcome failed: conflict markers are left in greeting.txt") || !strings.Contains(st[0].Body, "stays open as it was") ||
		!strings.Contains(st[0].Body, "`/agent rebase`") || strings.Contains(st[0].Body, "`/agent retry`") {
		t.Errorf("status after markers were left: %+v", st)
	}

	if code := e.comment(pr, true, "/agent rebase", "delivery-attack-rebase"); code != http.StatusAccepted {
		t.Fatalf("/agent rebase: %d, want 202", code)
	}
	if info := e.waitTask("delivery-attack-rebase", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("/agent rebase ended %s: %s", info.State, info.LastErr)
	}
	merged := e.remote.Head(t, owner, repoName, "agent/issue-1")
	dir := e.remote.Dir(owner, repoName)
	if parents := strings.Fields(githubtest.Git(t, dir, "rev-list", "--parents", "-n", "1", merged)); len(parents) != 3 || parents[1] != head || parents[2] != base {
		t.Fatalf("the branch's head %s has parents %v, want a merge of %s and %s", merged, parents[1:], head, base)
	}
	body = e.fake.Pulls(owner, repoName)[0].Body
	for _, want := range []string{"| `greeting.txt` |", "| `notes.txt` |", "| `make` | `make check` | ✅ passed | ✅ passed |",
		"(base branch moved: merged master (" + base[:7] + ") with conflicts in greeting.txt): failed, conflict markers are left in greeting.txt",
		"(/agent rebase: merged master (" + base[:7] + ") with conflicts in greeting.txt): verified"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body after the resolution lacks %q:\n%s", want, body)
		}
	}
	runs := e.fake.CheckRuns(owner, repoName, merged)
	if len(runs) != 1 || runs[0].Name != githubjob.CheckRunPrefix+"make" || !strings.Contains(runs[0].Summary+runs[0].Text, "the base Makefile ran") {
		t.Errorf("check runs on the merge: %+v, want the base's make check with its output", runs)
	}
}

// verification is body's Verification section.
func verification(body string) string {
	_, after, _ := strings.Cut(body, "## Verification")
	v, _, _ := strings.Cut(after, "## Not verified")
	return v
}

// The default branch moves without a conflict but with a check the pull
// request does not pass: the merge is checked again, the model changes
// nothing, and the status says the merge is not verified, never that
// nothing needed changing; the failing check is the merge commit's.
func TestMergeThatBreaksACheck(t *testing.T) {
	sandboxtest.EndToEnd(t)
	e := newE2E(t, append(fixGreeting(),
		call("finish", `{"summary":"The merge needs nothing from this pull request."}`),
	)...)
	e.startWorker()
	if code := e.label(1, "delivery-breaks-label"); code != http.StatusAccepted {
		t.Fatalf("label: %d, want 202", code)
	}
	if info := e.waitTask("delivery-breaks-label", asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("solve ended %s: %s", info.State, info.LastErr)
	}
	pr := e.fake.Pulls(owner, repoName)[0].Number
	base := e.pushMaster(t, "a stricter check", map[string]string{".github/agent.yml": "verify:\n" +
		"  - name: greeting\n    run: grep -qx hello greeting.txt\n" +
		"  - name: readme\n    run: grep -q spelled README.md\n"})
	if code := e.pushEvent(base, "delivery-breaks-push"); code != http.StatusAccepted {
		t.Fatalf("push: %d, want 202", code)
	}
	if info := e.waitTask(tasks.RebaseID(issue1, pr, base), asynq.TaskStateCompleted, asynq.TaskStateArchived); info.State != asynq.TaskStateCompleted {
		t.Fatalf("update ended %s: %s", info.State, info.LastErr)
	}
	merged := e.remote.Head(t, owner, repoName, "agent/issue-1")
	got := map[string]string{}
	for _, r := range e.fake.CheckRuns(owner, repoName, merged) {
		got[r.Name] = r.Conclusion
	}
	if got[githubjob.CheckRunPrefix+"greeting"] != "success" || got[githubjob.CheckRunPrefix+"readme"] != "failure" {
		t.Errorf("check runs on the merge %s: %v, want greeting passing and readme failing", merged, got)
	}
	st := e.statusComments(1)
	if len(st) != 1 || !strings.Contains(st[0].Body, "1 of 2 passed") || strings.Contains(st[0].Body, "nothing needed changing") ||
		!strings.Contains(st[0].Body, "not verified") {
		t.Errorf("status after a merge that fails a check: %+v", st)
	}
	if body := e.fake.Pulls(owner, repoName)[0].Body; !strings.Contains(body, "1 of 2 checks passed there") || !strings.Contains(body, "The merge is not verified.") {
		t.Errorf("the body's verification does not say the merge failed a check:\n%s", body)
	}
}
