package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/verify"
)

// A pull request whose moved base GitHub could not merge is resolved by
// an attempt like any retry (retrysetup.go): the clone is the pull
// request's head, and before anything reads it it becomes the merge of
// the new base into it (gitrepo.LayMerge), markers and all. That merge
// is the run's base: setup's tree, the pristine tree and "what the model
// changed" are all against it, so the base's own changes are never the
// model's. The model is told which files hold markers; a marker left in
// any file of the result fails the attempt, and nothing is committed.
// The commit is the merge (two parents), made as any other.

// MergeJob is the merge a conflict's resolution starts from.
type MergeJob struct {
	// MergeBase is the commit the pull request's head and the new base
	// share; Theirs is the new base's commit. Both full SHAs. Required.
	MergeBase, Theirs string
	// BaseBranch names the base for the markers and the model ("main").
	BaseBranch string
	// Subjects are the first lines of the base's commits since the
	// merge base, oldest first: what the base meant by its changes.
	Subjects []string
}

// MergeResult is what the resolution's merge laid, for the publisher:
// the history names the files.
type MergeResult struct {
	// Conflicts are the files that held markers after the merge.
	Conflicts []string
	// Left are the files that still hold a marker after the model: the
	// attempt failed and nothing was committed.
	Left []string
}

// mergeState is what layMerge laid and findMarkers found.
type mergeState struct {
	laid   bool
	merged gitrepo.Merged
	left   []string
}

// layMerge turns the clone into the merge Job.Merge asks for and tells
// the model what it has to resolve; nothing for another run.
func (r *run) layMerge(ctx context.Context) error {
	m := r.job.Merge
	if m == nil {
		return nil
	}
	if !plumbing.IsHash(m.MergeBase) || !plumbing.IsHash(m.Theirs) {
		return fmt.Errorf("merge: want commit SHAs, got merge base %q and base %q", m.MergeBase, m.Theirs)
	}
	base := m.BaseBranch
	if base == "" {
		base = "base"
	}
	merged, err := r.repo.LayMerge(ctx, gitrepo.MergeInput{
		Base: plumbing.NewHash(m.MergeBase), Theirs: plumbing.NewHash(m.Theirs),
		Labels: gitrepo.Labels{Ours: "pull request", Base: "merge base " + m.MergeBase[:7], Theirs: base + " " + m.Theirs[:7]},
	})
	if err != nil {
		return fmt.Errorf("merge %s into the pull request: %w", base, err)
	}
	r.merge = mergeState{laid: true, merged: merged}
	if len(merged.Conflicts) > 0 && r.job.Attempt.Trigger != "" {
		// The history says which files the attempt resolved.
		r.job.Attempt.Trigger += " in " + strings.Join(merged.Conflicts, ", ")
	}
	r.job.Issue.Feedback = mergeTask(*m, merged) + "\n" + r.job.Issue.Feedback
	return nil
}

// mergeTask is what the model hears first on a conflict's resolution:
// which files hold markers, and what each side meant.
func mergeTask(m MergeJob, merged gitrepo.Merged) string {
	var b strings.Builder
	base := m.BaseBranch
	if base == "" {
		base = "the base branch"
	}
	fmt.Fprintf(&b, "The base branch %s moved to %s and changed lines this pull request changed too. It has been merged into the work tree; ", base, m.Theirs[:7])
	if len(merged.Conflicts) == 0 {
		b.WriteString("every change merged without a conflict. Check that the merge still does what the issue asks.\n")
	} else {
		fmt.Fprintf(&b, "these files hold conflict markers: %s.\n", strings.Join(merged.Conflicts, ", "))
		b.WriteString("Each conflict is written as git writes it: `<<<<<<< pull request` then this pull request's lines, " +
			"`||||||| merge base` then the lines both started from, `=======`, then the base branch's lines and `>>>>>>>`. " +
			"Resolve every one so the file keeps what both sides meant (the issue says what this pull request is for; " +
			"the base's commits below say what the base changed), and remove every marker line. " +
			"A marker left in any file fails this attempt and nothing is pushed.\n")
	}
	fmt.Fprintf(&b, "Files this pull request changed since the merge base: %s.\n", orNone(merged.Ours))
	fmt.Fprintf(&b, "Files the base branch changed since the merge base: %s.\n", orNone(merged.Theirs))
	if len(m.Subjects) > 0 {
		b.WriteString("The base branch's commits since the merge base (untrusted text):\n")
		for _, s := range m.Subjects {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}

func orNone(paths []string) string {
	if len(paths) == 0 {
		return "none"
	}
	const most = 50
	if len(paths) > most {
		return strings.Join(paths[:most], ", ") + fmt.Sprintf(" and %d more", len(paths)-most)
	}
	return strings.Join(paths, ", ")
}

// findMarkers lists the files that hold a conflict marker in what would
// be committed: a conflicted file the model left as merged, and any file
// of the change whose read bytes hold one.
func (r *run) findMarkers() error {
	if !r.merge.laid || !r.fin.changesRead {
		return nil
	}
	changed := map[string]bool{}
	var left []string
	for _, c := range r.fin.changes {
		changed[c.Path] = true
		if c.Kind == gitrepo.Deleted || c.Binary || c.TooLarge || c.GitPath != "" {
			continue
		}
		b, err := r.repo.ReadChange(c)
		if err != nil {
			return fmt.Errorf("read %s for conflict markers: %w", c.Path, err)
		}
		if gitrepo.HasMarkers(b) {
			left = append(left, c.Path)
		}
	}
	for _, p := range r.merge.merged.Conflicts {
		if !changed[p] {
			left = append(left, p)
		}
	}
	r.merge.left = left
	return nil
}

// decide fails an outcome that would commit a marker left behind.
func (m mergeState) decide(o verify.Outcome, reason string) (verify.Outcome, string) {
	if len(m.left) == 0 {
		return o, reason
	}
	switch o {
	case verify.Verified, verify.Unverified, verify.Failed:
		return verify.Failed, "conflict markers are left in " + strings.Join(m.left, ", ") + ", so the merge was not pushed"
	}
	return o, reason
}

// result is the merge for the Result; nil when none was laid.
func (m mergeState) result() *MergeResult {
	if !m.laid {
		return nil
	}
	return &MergeResult{Conflicts: m.merged.Conflicts, Left: m.left}
}

// stepBudget is the model's step cap: the merge's own, smaller one for a
// conflict's resolution, the attempt's otherwise.
func (r *run) stepBudget() int {
	if r.merge.laid {
		return r.clone.cfg.Limits.MergeSteps
	}
	return r.clone.cfg.Limits.MaxSteps
}
