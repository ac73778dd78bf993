package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/verify"
)

// TestReplaceMergeChecked: the merge's checks go at the top of the
// Verification section, a second merge replaces the first's block, a
// failed check says the merge is not verified, and every hidden marker
// of the body reads back.
func TestReplaceMergeChecked(t *testing.T) {
	body := prBodyWithPush(t)
	pass := check("test", "go test ./...", verify.Final, true, 0)
	fail := check("lint | x", "make lint", verify.Final, false, 0)
	once, err := ReplaceMergeChecked(body, MergeChecked{Base: "main", Commit: "1111111111111111", Checks: []verify.CheckResult{pass}})
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Index(once, "## Verification")
	if m := strings.Index(once, "**Checked again on the merge of `main` into this branch (`1111111`)**: 1 of 1 checks passed"); m < v || m > strings.Index(once, "**Outcome:") {
		t.Fatalf("the merge's block is not at the top of Verification:\n%s", once)
	}
	twice, err := ReplaceMergeChecked(once, MergeChecked{Base: "main", Commit: "2222222222222222", Checks: []verify.CheckResult{pass, fail}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(twice, "1111111") || strings.Count(twice, "Checked again on the merge") != 1 {
		t.Errorf("the second merge did not replace the first's block:\n%s", twice)
	}
	if !strings.Contains(twice, "1 of 2 checks passed there") || !strings.Contains(twice, "The merge is not verified.") {
		t.Errorf("a failed check on the merge is not said:\n%s", twice)
	}
	if !strings.Contains(twice, "| `lint \\| x` |") {
		t.Errorf("a check's name breaks the table:\n%s", twice)
	}
	readBack(t, "after two merges", twice, 1)
	second := mergedBlock(MergeChecked{Base: "main", Commit: "2222222222222222", Checks: []verify.CheckResult{pass, fail}})
	if got := strings.Replace(twice, "\n"+second+"\n", "", 1); got != body {
		t.Errorf("the rest of the body changed:\n%s", got)
	}
}

// A body without the Verification heading (a repository's template)
// gets the block at its top.
func TestReplaceMergeCheckedWithoutHeading(t *testing.T) {
	got, err := ReplaceMergeChecked("## Summary\n\nText.\n", MergeChecked{Base: "dev", Commit: "abc", Checks: nil})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "<!-- patchwright:merged start -->\n**Checked again on the merge of `dev`") || !strings.HasSuffix(got, "## Summary\n\nText.\n") {
		t.Errorf("got:\n%s", got)
	}
}
