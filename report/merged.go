package report

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/report/marker"
	"github.com/patchwright/patchwright/verify"
)

// MergeChecked is the checks' run on a merge of the moved base into a
// pull request's branch that the model left as it was: the tree a
// reviewer would now merge, which the body's own table does not show.
type MergeChecked struct {
	// Base is the base branch merged in; Commit the merge commit.
	Base, Commit string
	Checks       []verify.CheckResult
}

// ReplaceMergeChecked puts m at the top of body's Verification section,
// replacing the block an earlier merge left, so what a reviewer reads
// first is the result on the tree they would merge; the table below it
// stays, marked as the earlier head's. A body without that heading (a
// repository's template) gets the block at its top.
func ReplaceMergeChecked(body string, m MergeChecked) (string, error) {
	if i := strings.Index(body, marker.MergedStart); i >= 0 {
		if j := strings.Index(body[i:], marker.MergedEnd); j >= 0 {
			body = body[:i] + strings.TrimLeft(body[i+j+len(marker.MergedEnd):], "\n")
		}
	}
	block := mergedBlock(m)
	at := 0
	if i := strings.Index(body, "\n## Verification\n"); i >= 0 {
		at = i + len("\n## Verification\n")
		block = "\n" + block
	}
	out := body[:at] + block + "\n" + body[at:]
	if len(out) >= MaxBody {
		return "", fmt.Errorf("pull request body with the merge's checks is %d bytes (limit %d)", len(out), MaxBody)
	}
	return out, nil
}

// mergedBlock renders m: a verdict line and one row per check.
func mergedBlock(m MergeChecked) string {
	passed := 0
	for _, c := range m.Checks {
		if c.Passed {
			passed++
		}
	}
	sha := m.Commit
	if len(sha) > 7 {
		sha = sha[:7]
	}
	var b strings.Builder
	b.WriteString(marker.MergedStart + "\n")
	fmt.Fprintf(&b, "**Checked again on the merge of %s into this branch (%s)**: %d of %d checks passed there, and the model changed nothing. ",
		code(m.Base), code(sha), passed, len(m.Checks))
	if passed == len(m.Checks) {
		b.WriteString("The table after this one is the earlier head's.\n")
	} else {
		b.WriteString("The merge is not verified. The table after this one is the earlier head's.\n")
	}
	if len(m.Checks) > 0 {
		b.WriteString("\n| check | command | on the merge |\n|---|---|---|\n")
		for i := range m.Checks {
			c := &m.Checks[i]
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(c.Name), cell(c.Command), strings.ReplaceAll(resultText(c), "|", `\|`))
		}
	}
	b.WriteString(marker.MergedEnd + "\n")
	return b.String()
}
