package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify/findings"
)

// A retry clones the agent branch: commits an earlier attempt's model
// wrote. Its first setup runs no code of theirs (issue 40): setup runs on
// the default branch's commit, as a first run's does, and only then are
// the agent branch's files laid over what setup made. So the pristine
// tree is the agent branch's files plus what a trusted setup made, and
// what the earlier attempts changed against the default branch counts as
// the model's change wherever trust asks (modelChanges): dependency setup
// after the change reinstalls for the manifests they touched, and its
// commands are judged on every path they wrote (treecode.go). The pull
// request's diff is against the default branch too.

// retryTree is the retry's trees as trust sees them: the default
// branch's commit its setup ran on (zero on a first run, or a retry
// with no setup), and what the agent branch changed against it, laid
// over setup's tree once laid.
type retryTree struct {
	defaultTip plumbing.Hash
	earlier    []gitrepo.Change
	laid       bool
}

// setupOnDefault turns a retry's work tree into the default branch's
// commit before its first setup, and returns that commit; a run on the
// default branch, or with no setup, keeps its clone (the zero hash). It
// runs before the tree is handed to the sandbox's user.
func (r *run) setupOnDefault(ctx context.Context) (plumbing.Hash, error) {
	if r.trustedTree() || len(r.setupScripts()) == 0 {
		return plumbing.ZeroHash, nil
	}
	tip, err := r.repo.FetchTip(ctx, r.job.ConfigBranch)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("fetch the default branch for the first setup: %w", err)
	}
	if _, err := r.overlay(r.repo.Base(), tip); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("check out the default branch for the first setup: %w", err)
	}
	return tip, nil
}

// layEarlierAttempts writes the agent branch's files over what the first
// setup made on the default branch's commit (setupOnDefault), and returns
// retry with the difference kept as the earlier attempts' change. It runs
// once setup's container is gone, before the pristine tree is copied.
func (r *run) layEarlierAttempts(retry retryTree) (retryTree, error) {
	if retry.defaultTip.IsZero() || retry.laid {
		return retry, nil
	}
	earlier, err := r.overlay(retry.defaultTip, r.repo.Base())
	if err != nil {
		return retry, fmt.Errorf("lay the agent branch over the first setup: %w", err)
	}
	retry.earlier, retry.laid = earlier, true
	uid, gid := r.e.sandboxOwner()
	return retry, sandbox.HandOver(r.ws.Dir(), uid, gid)
}

func (r *run) overlay(from, to plumbing.Hash) ([]gitrepo.Change, error) {
	root, err := os.OpenRoot(r.ws.Dir())
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return r.repo.Overlay(root, from, to)
}

// modelChanges is everything a model wrote against the default branch's
// commit: on a retry whose setup ran there, the earlier attempts' change
// and then this run's (a path in both counts once, as this run left it);
// otherwise this run's change alone.
func (r *run) modelChanges() []gitrepo.Change {
	if len(r.first.retry.earlier) == 0 {
		return r.fin.changes
	}
	seen := map[string]bool{}
	for _, c := range r.fin.changes {
		seen[c.Path] = true
	}
	out := append([]gitrepo.Change(nil), r.fin.changes...)
	for _, c := range r.first.retry.earlier {
		if !seen[c.Path] {
			out = append(out, c)
		}
	}
	return out
}

// depsFiles are the manifests dependency setup after the change reads, as
// findings.File, against the default branch's commit: on a retry whose
// setup ran there, a manifest only an earlier attempt changed is read at
// the agent branch's commit, and every manifest's old version is the
// default branch's, so a Go module an earlier attempt named is new
// (goproxy.go) as it would have been in that attempt.
func (r *run) depsFiles(changed []gitrepo.Change) ([]findings.File, error) {
	if r.first.retry.defaultTip.IsZero() {
		return findingFiles(r.repo, changed)
	}
	// Only once the change is read can a manifest be the earlier
	// attempts' alone: fetch_dependencies is given the live tree's.
	earlierOnly := map[string]bool{}
	if r.fin.changesRead {
		for _, c := range r.first.retry.earlier {
			earlierOnly[c.Path] = true
		}
		for _, c := range r.fin.changes {
			delete(earlierOnly, c.Path)
		}
	}
	var out []findings.File
	for _, c := range changed {
		f := findings.File{Path: c.Path}
		var err error
		if earlierOnly[c.Path] {
			f.New, err = r.repo.BaseContent(c.Path)
		} else {
			var fs []findings.File
			fs, err = findingFiles(r.repo, []gitrepo.Change{c})
			if len(fs) == 1 {
				f = fs[0]
			}
		}
		if err != nil {
			return out, err
		}
		f.Unread = f.New == nil
		if f.Base, err = r.repo.ContentAt(r.first.retry.defaultTip, c.Path); err != nil {
			return out, err
		}
		out = append(out, f)
	}
	return out, nil
}
