package pipeline

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// AlwaysProtected are protected on every repository, in addition to its
// protected_paths (docs/design.md §4.3): the configuration the next run trusts and
// the workflows GitHub runs with the repository's secrets.
var AlwaysProtected = []string{".github/agent.yml", ".github/workflows/**"}

// Kinds of the findings this package makes itself (docs/design.md §4.5): a change
// to a protected path, and a file too large to commit, left out of the
// commit.
const (
	KindProtectedPath = "protected_path"
	KindLargeFile     = "large_file"
)

// protected lists every protected pattern of the run.
func (r *run) protected() []string {
	return append(slices.Clone(AlwaysProtected), r.clone.cfg.ProtectedPaths...)
}

// dropUncommittable takes out of the change list what must not be
// committed, whatever wrote it (a file tool refuses protected paths; a
// command does not): changes to protected paths, which the commit leaves
// as on the base, paths git treats as its own directory, and files over
// gitrepo.MaxFileBytes. Each gets a finding.
func (r *run) dropUncommittable() {
	kept := r.fin.changes[:0]
	for _, c := range r.fin.changes {
		if pat, ok := matchAny(r.protected(), c.Path); ok {
			r.fin.evidence = append(r.fin.evidence, findings.Finding{Kind: KindProtectedPath, Path: c.Path,
				Detail: fmt.Sprintf("The change to this protected path (%s) was left out of the commit: the agent may not edit it.", pat)})
			r.fin.dropped = append(r.fin.dropped, c)
			continue
		}
		if p, pat, ok := protectedCover(r.protected(), c); ok {
			r.fin.evidence = append(r.fin.evidence, findings.Finding{Kind: KindProtectedPath, Path: c.Path,
				Detail: fmt.Sprintf("This change would replace the protected path %s (%s) through its directory, so it was left out of the commit: the agent may not edit it.", p, pat)})
			r.fin.dropped = append(r.fin.dropped, c)
			continue
		}
		if c.GitPath != "" {
			r.fin.evidence = append(r.fin.evidence, findings.Finding{Kind: KindProtectedPath, Path: c.Path,
				Detail: fmt.Sprintf("Git treats this path as its own directory (%s; a file there would land in the .git directory on some file systems), so it was left out of the commit unread.", c.GitPath)})
			r.fin.dropped = append(r.fin.dropped, c)
			continue
		}
		if c.TooLarge {
			r.fin.evidence = append(r.fin.evidence, findings.Finding{Kind: KindLargeFile, Path: c.Path,
				Detail: fmt.Sprintf("This file is over %d MB, so it was left out of the commit unread.", gitrepo.MaxFileBytes>>20)})
			r.fin.dropped = append(r.fin.dropped, c)
			continue
		}
		kept = append(kept, c)
	}
	r.fin.changes = kept
}

// protectedCover finds a protected path among those a change covers (a
// link or file in place of a directory, a link into another directory):
// what a checkout of the commit would hold there is the change's doing.
func protectedCover(patterns []string, c gitrepo.Change) (covered, pattern string, ok bool) {
	for _, p := range c.Covers {
		if pat, ok := matchAny(patterns, p); ok {
			return p, pat, true
		}
	}
	if c.CoversAll {
		for _, pat := range patterns {
			if mayMatchUnder(pat, c.Path) {
				return c.Path + "/…", pat, true
			}
		}
	}
	return "", "", false
}

// mayMatchUnder reports whether pattern could match a path under dir,
// judged by the pattern's literal prefix (before its first wildcard):
// conservative, for a directory too large to list.
func mayMatchUnder(pattern, dir string) bool {
	literal := pattern
	if i := strings.IndexAny(pattern, "*?[{\\"); i >= 0 {
		literal = pattern[:i]
	}
	under := dir + "/"
	return strings.HasPrefix(literal, under) || strings.HasPrefix(under, literal)
}

func matchAny(patterns []string, path string) (string, bool) {
	for _, p := range patterns {
		if m, _ := doublestar.Match(p, path); m {
			return p, true
		}
	}
	return "", false
}

// analyze runs the honest-evidence step on the final change and records
// its findings in the ledger.
func (r *run) analyze() error {
	in, err := r.findingsInput(r.fin.changes)
	if err != nil {
		return err
	}
	found := findings.Analyze(in)
	for _, f := range found {
		// Recorded before the scan: a path that holds a secret is shown
		// withheld here too.
		shown := f
		shown.Path = r.shownPath(f.Path)
		if _, err := r.ledger.Append(&ledger.FindingEvent{Finding: shown}); err != nil {
			return err
		}
	}
	r.fin.evidence = append(r.fin.evidence, found...)
	return nil
}

// findingsSoFar is what the verify tool tells the model about its change
// as it stands, so it can undo a weakened test before it finishes: the
// findings' one-line summary ("" for none) and whether one blocks
// verified.
func (r *run) findingsSoFar() (string, bool) {
	changes, err := r.listChanges()
	if err != nil {
		return "", false
	}
	in, err := r.findingsInput(changes)
	if err != nil {
		return "", false
	}
	// No final check has run yet: compared with the baseline, every check
	// would look dropped (test_skipped). The verify tool reports its own
	// checks' results beside this.
	in.Checks = nil
	found := findings.Analyze(in)
	return findings.Summary(found), len(findings.Blocking(found)) > 0
}

// findingsBytes bounds the new text the findings hold at once: their
// parsers read each changed file whole, so past this sum a file is judged
// by its path alone (findings.File.Unread), as a binary file is (no parser
// reads one, and a sparse file of zeros is one). The change's own bound
// (MaxChangeBytes) is far larger.
const findingsBytes int64 = 64 << 20

// findingsInput reads what the findings look at: each changed file before
// and after (bounded), the issue, the checks and what the model read.
func (r *run) findingsInput(changes []gitrepo.Change) (findings.Input, error) {
	in := findings.Input{
		IssueTitle: r.job.Issue.Title, IssueBody: r.job.Issue.Body,
		Read:   r.readPaths(),
		Limits: findings.Limits{MaxChangedFiles: r.clone.cfg.Limits.MaxChangedFiles, MaxChangedLines: r.clone.cfg.Limits.MaxChangedLines},
		Checks: r.findingChecks(),
	}
	files, err := findingFiles(r.repo, changes)
	in.Files = files
	return in, err
}

// findingFiles reads each changed file before and after, the new text
// within findingsBytes.
func findingFiles(repo *gitrepo.Repo, changes []gitrepo.Change) ([]findings.File, error) {
	read := readable(changes)
	var out []findings.File
	for _, c := range changes {
		f := findings.File{Path: c.Path}
		var err error
		if c.Kind != gitrepo.Added {
			if f.Base, err = repo.BaseContent(c.Path); err != nil {
				return out, err
			}
		}
		if c.Kind != gitrepo.Deleted {
			if read[c.Path] {
				// One file's bytes, read back from its blob: the findings'
				// parsers see a file whole.
				if f.New, err = repo.ReadChange(c); err != nil {
					return out, err
				}
			}
			// Too large, binary, past the budget or a link: judged by its
			// path, never as deleted.
			f.Unread = f.New == nil
		}
		out = append(out, f)
	}
	return out, nil
}

// readable picks the changed text files whose new version the findings
// read, smallest first until findingsBytes: a test or a manifest (small,
// as a rule) is not left unread behind one large file, and a change must
// add thousands of files, which the scope findings list, to push it out.
func readable(changes []gitrepo.Change) map[string]bool {
	var text []gitrepo.Change
	for _, c := range changes {
		if c.Kind != gitrepo.Deleted && !c.Symlink && !c.TooLarge && !c.Binary {
			text = append(text, c)
		}
	}
	slices.SortStableFunc(text, func(a, b gitrepo.Change) int { return cmp.Compare(a.Size(), b.Size()) })
	read := map[string]bool{}
	budget := findingsBytes
	for _, c := range text {
		if c.Size() > budget {
			break
		}
		budget -= c.Size()
		read[c.Path] = true
	}
	return read
}

// findingChecks pairs each check's baseline and final commands, with the
// zero-tests flag of its final run and the tests each phase ran by name:
// the final run's only when it passed (a failing check already keeps the
// change from being verified).
func (r *run) findingChecks() []findings.Check {
	var out []findings.Check
	index := map[string]int{}
	add := func(c verify.CheckResult, final bool) {
		i, ok := index[c.Name]
		if !ok {
			i = len(out)
			index[c.Name] = i
			out = append(out, findings.Check{Name: c.Name})
		}
		ran := findings.TestNames{Known: c.Ran && c.Summary != nil && c.Summary.Named}
		if ran.Known {
			ran.Names = c.Summary.RanTests
		}
		if final {
			ran.Known = ran.Known && c.Passed
			out[i].Final, out[i].ZeroTests, out[i].FinalRan = c.Command, c.ZeroTests, ran
		} else {
			out[i].Baseline, out[i].BaselineRan = c.Command, ran
		}
	}
	for _, c := range r.baseline {
		add(c, false)
	}
	for _, c := range r.fin.checks {
		add(c, true)
	}
	return out
}

// readPaths are the paths the model read with read_file, from the ledger.
func (r *run) readPaths() []string {
	var out []string
	for _, rec := range r.ledger.Records() {
		if rec.Type != ledger.TypeToolCall {
			continue
		}
		var call ledger.ToolCall
		if rec.Decode(&call) != nil || call.Tool != "read_file" {
			continue
		}
		var args struct {
			Path string `json:"path"`
		}
		if json.Unmarshal([]byte(call.Arguments), &args) == nil && args.Path != "" {
			out = append(out, args.Path)
		}
	}
	return out
}
