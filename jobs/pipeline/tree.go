package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/patchwright/patchwright/jobs/gitrepo"
)

// The checks never run on the tree the model worked in. Two trees are
// made for them instead:
//
//   - the pristine tree, a copy of the work tree taken after setup and
//     before the agent's container starts: the base commit plus what the
//     trusted setup made (dependencies, generated files), less any file
//     that held a setup-only secret (setupscrub.go), which nothing of the
//     model's ever touched. The baseline checks run on a copy of it, and
//     the change is read against it (readChanges), so what setup made is
//     never the model's change.
//   - the final tree, the pristine tree with exactly the committed change
//     written into it from the blobs that were read and scanned: a file the
//     commit leaves out (ignored, untracked, protected, too large) is not
//     there, so it cannot make a check pass or fail.

// keepPristine copies the work tree before the model's container can
// write it, and returns the copy.
func (r *run) keepPristine() (string, error) {
	dir := filepath.Join(r.clone.trees, "pristine")
	if err := copyTree(r.ws.Dir(), dir); err != nil {
		return "", fmt.Errorf("copy the work tree before the agent phase: %w", err)
	}
	return dir, nil
}

// baselineTree is a copy of the pristine tree for the baseline checks.
func (r *run) baselineTree(pristine string) (string, error) {
	dir := filepath.Join(r.clone.trees, "check-"+string(PhaseBaseline))
	if err := copyTree(pristine, dir); err != nil {
		return "", fmt.Errorf("copy the work tree for the baseline checks: %w", err)
	}
	return dir, nil
}

// finalTree turns the pristine tree into the committed tree: the last
// phase that needs the pristine tree is the baseline, so it is moved, not
// copied, and the kept changes are written into it.
func (r *run) finalTree(pristine string) (string, error) {
	dir := filepath.Join(r.clone.trees, "check-"+string(PhaseFinal))
	if err := os.Rename(pristine, dir); err != nil {
		return "", fmt.Errorf("prepare the tree for the final checks: %w", err)
	}
	if err := applyChanges(dir, r.repo, r.fin.changes); err != nil {
		return "", fmt.Errorf("write the change for the final checks: %w", err)
	}
	return dir, nil
}

// applyChanges writes changes into dir as the commit will hold them:
// deletions first, then each new version in place of whatever the path
// held (a directory replaced by a file, or the reverse), links as links.
// Each file is streamed from the blob Changes wrote (the bytes that were
// scanned), never held whole.
func applyChanges(dir string, repo *gitrepo.Repo, changes []gitrepo.Change) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	sorted := append([]gitrepo.Change(nil), changes...)
	sort.SliceStable(sorted, func(i, j int) bool {
		di, dj := sorted[i].Kind == gitrepo.Deleted, sorted[j].Kind == gitrepo.Deleted
		if di != dj {
			return di
		}
		return sorted[i].Path < sorted[j].Path
	})
	for _, c := range sorted {
		if err := root.RemoveAll(c.Path); err != nil {
			return err
		}
		if c.Kind == gitrepo.Deleted {
			continue
		}
		if err := writeChange(root, repo, c); err != nil {
			return err
		}
	}
	return nil
}

func writeChange(root *os.Root, repo *gitrepo.Repo, c gitrepo.Change) error {
	if c.TooLarge {
		return fmt.Errorf("%s is too large to write", c.Path)
	}
	if err := root.MkdirAll(path.Dir(c.Path), 0o755); err != nil {
		return err
	}
	if c.Symlink {
		return root.Symlink(c.Target(), c.Path)
	}
	perm := os.FileMode(0o644)
	if c.Executable() {
		perm = 0o755
	}
	in, err := repo.Open(c)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(c.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	return errors.Join(writeSparse(out, in, c.Size()), out.Close())
}
