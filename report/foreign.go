package report

import (
	"fmt"
	"strings"
)

// Foreign are the commits on the agent branch that Patchwright did not
// make: pushed by someone else since Patchwright's last push (the pushed
// marker). A retry builds on them, so the body lists them and their files
// and does not vouch for them.
type Foreign struct {
	Commits []ForeignCommit
	// More counts commits left out of Commits.
	More int
}

// ForeignCommit is one such commit; every field but SHA is untrusted.
type ForeignCommit struct {
	SHA, Author, Subject string
	Files                []string
	// MoreFiles counts files left out of Files.
	MoreFiles int
}

// Count is how many commits there are.
func (f Foreign) Count() int { return len(f.Commits) + f.More }

// foreignFact is the "Not verified" line for commits Patchwright did not
// make.
func foreignFact(f Foreign) []fact {
	n := f.Count()
	if n == 0 {
		return nil
	}
	return []fact{say(fmt.Sprintf("The branch holds %d commit%s that Patchwright did not make (listed under Changes). The checks ran on the tree that includes them, but Patchwright did not write or review them, and its configuration came from the default branch, not from them.", n, plural(n)))}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// foreignRow is one commit as the Changes section shows it: every cell
// already rendered as table-safe code spans.
type foreignRow struct{ SHA, Author, Subject, Files string }

func foreignRows(f Foreign) []foreignRow {
	var out []foreignRow
	for _, c := range f.Commits {
		files := make([]string, len(c.Files))
		for i, p := range c.Files {
			files[i] = cell(p)
		}
		fs := strings.Join(files, " ")
		if c.MoreFiles > 0 {
			fs += fmt.Sprintf(" …and %d more", c.MoreFiles)
		}
		if fs == "" {
			fs = "none"
		}
		sha := c.SHA
		if len(sha) > 12 {
			sha = sha[:12]
		}
		out = append(out, foreignRow{SHA: cell(sha), Author: cell(c.Author), Subject: cell(c.Subject), Files: fs})
	}
	return out
}
