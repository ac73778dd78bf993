package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// validate checks one task before anything runs (docs/design.md §4.9). It returns
// the prepared task, or the reason the task is invalid, or an error when
// the check itself could not be done.
func (e *evaluator) validate(ctx context.Context, t *Task) (*prepared, string, error) {
	dir := filepath.Join(e.work, "validate", unsafeID.ReplaceAllString(t.ID, "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	p := &prepared{task: t, repo: t.Repo, cache: e.o.CacheVolume(t)}
	if reason := e.openRepo(ctx, p, dir); reason != "" {
		return nil, reason, nil
	}
	base := filepath.Join(dir, "base")
	if err := exportTree(ctx, p.repo, t.Commit, base); err != nil {
		return nil, "", errInfra{err}
	}
	if err := checkBase(t, base); err != nil {
		return nil, "refused: hidden tests leak into the sandbox: " + err.Error(), nil
	}
	lines, err := treeLines(base)
	if err != nil {
		return nil, "", err
	}
	p.fp = newFingerprint(t, lines)
	if err := p.fp.checkIssue(t); err != nil {
		return nil, "refused: hidden tests leak into the model's context: " + err.Error(), nil
	}
	if p.setup, err = readSetup(t, base); err != nil {
		return nil, "the repository's configuration at the base commit: " + err.Error(), nil
	}
	p.image = firstOf(e.o.Image, t.Image, p.setup.image, e.o.DefaultImage)
	if reason, err := e.checkImage(ctx, p.image); reason != "" || err != nil {
		return nil, reason, err
	}
	steps := []func(context.Context, *prepared, string) (string, error){
		e.failsOnBase, e.passesWithFix, e.baseline,
	}
	for _, step := range steps {
		if reason, err := step(ctx, p, dir); reason != "" || err != nil {
			return nil, reason, err
		}
	}
	return p, "", nil
}

// openRepo finds the task's repository and its base commit; a remote one
// is mirrored once into dir's parent.
func (e *evaluator) openRepo(ctx context.Context, p *prepared, dir string) string {
	t := p.task
	if isURL(t.Repo) {
		p.repo = filepath.Join(e.work, "mirrors", unsafeID.ReplaceAllString(t.ID, "-")+".git")
		if err := mirror(ctx, t.Repo, p.repo); err != nil {
			return "clone the task repository: " + err.Error()
		}
	} else if _, err := os.Stat(t.Repo); err != nil {
		return e.fromSource(ctx, p)
	}
	if err := hasCommit(ctx, p.repo, t.Commit); err != nil {
		return err.Error()
	}
	return ""
}

// fromSource uses the task's src/ directory when its repository has not
// been materialised: the same commit is made in the work directory, and
// the suite's directory is left as it is.
func (e *evaluator) fromSource(ctx context.Context, p *prepared) string {
	t := p.task
	src := filepath.Join(t.Dir, "src")
	if info, err := os.Stat(src); t.Dir == "" || err != nil || !info.IsDir() {
		return fmt.Sprintf("the task repository %s does not exist", t.Repo)
	}
	p.repo = filepath.Join(e.work, "sources", unsafeID.ReplaceAllString(t.ID, "-"))
	sha, err := materialise(ctx, src, p.repo)
	if err != nil {
		return "make a repository of src/: " + err.Error()
	}
	if sha != t.Commit {
		return fmt.Sprintf("src/ makes commit %s but task.yml says %s (after changing src/, run testdata/eval/setup.sh --update)", sha, t.Commit)
	}
	return ""
}

// failsOnBase requires the hidden tests to fail on the base commit.
func (e *evaluator) failsOnBase(ctx context.Context, p *prepared, dir string) (string, error) {
	t := p.task
	tree := filepath.Join(dir, "base-hidden")
	if err := exportTree(ctx, p.repo, t.Commit, tree); err != nil {
		return "", errInfra{err}
	}
	if err := applyHidden(ctx, t, tree); err != nil {
		return "on the base commit: " + err.Error(), nil
	}
	out, reason, err := e.hidden(ctx, p, tree, "validate-base")
	if reason != "" || err != nil {
		return reason, err
	}
	if out.passed() {
		return fmt.Sprintf("the hidden tests pass on the base commit (they must fail before the fix): `%s` exited 0", t.HiddenRun), nil
	}
	return "", nil
}

// passesWithFix requires the hidden tests to pass with fix.patch, when the
// task has one.
func (e *evaluator) passesWithFix(ctx context.Context, p *prepared, dir string) (string, error) {
	t := p.task
	if len(t.FixPatch) == 0 {
		p.notes = append(p.notes, "no fix.patch: that the task can be solved was not checked")
		return "", nil
	}
	tree := filepath.Join(dir, "fix-hidden")
	if err := exportTree(ctx, p.repo, t.Commit, tree); err != nil {
		return "", errInfra{err}
	}
	if err := applyPatch(ctx, tree, t.FixPatch); err != nil {
		return "fix.patch does not apply to the base commit: " + err.Error(), nil
	}
	if err := applyHidden(ctx, t, tree); err != nil {
		return "with fix.patch: " + err.Error(), nil
	}
	out, reason, err := e.hidden(ctx, p, tree, "validate-fix")
	if reason != "" || err != nil {
		return reason, err
	}
	if !out.passed() {
		return fmt.Sprintf("the hidden tests fail with fix.patch applied (exit %d): %s", out.ExitCode, lastLine(out.Output)), nil
	}
	return "", nil
}

// baseline runs the existing tests on the base commit without the hidden
// tests: only a command that passes there can regress.
func (e *evaluator) baseline(ctx context.Context, p *prepared, dir string) (string, error) {
	t := p.task
	if len(p.setup.existing) == 0 {
		p.notes = append(p.notes, "no existing tests were configured or detected: only the hidden tests count")
		return "", nil
	}
	tree := filepath.Join(dir, "base-existing")
	if err := exportTree(ctx, p.repo, t.Commit, tree); err != nil {
		return "", errInfra{err}
	}
	outs, err := e.chk.run(ctx, p, checkJob{jobID(t, "validate-existing"), tree, p.setup.existing})
	if err != nil {
		return e.sandboxProblem(err)
	}
	for _, o := range outs {
		p.baseOK = append(p.baseOK, o.passed())
		if !o.passed() {
			p.notes = append(p.notes, fmt.Sprintf("existing check %s (`%s`) fails on the base commit (exit %d): it is not counted, only the hidden tests and the other checks are", o.Name, o.Run, o.ExitCode))
		}
	}
	return "", nil
}

// hidden runs the hidden tests alone on a tree.
func (e *evaluator) hidden(ctx context.Context, p *prepared, tree, what string) (outcome, string, error) {
	outs, err := e.chk.run(ctx, p, checkJob{jobID(p.task, what), tree, []command{{"hidden", p.task.HiddenRun}}})
	if err != nil {
		reason, err := e.sandboxProblem(err)
		return outcome{}, reason, err
	}
	return outs[0], "", nil
}

// sandboxProblem sorts a checker error: a sandbox that cannot be created
// ends the evaluation; a setup command that fails makes the task invalid.
func (e *evaluator) sandboxProblem(err error) (string, error) {
	var setup errSetup
	if errors.As(err, &setup) {
		return "the repository's setup failed in the sandbox: " + err.Error(), nil
	}
	return "", errInfra{err}
}

func (e *evaluator) checkImage(ctx context.Context, image string) (string, error) {
	if e.o.Images == nil {
		return "", nil
	}
	ok, err := e.o.Images.ImageExists(ctx, image)
	if err != nil {
		return "", errInfra{fmt.Errorf("look up sandbox image %s: %w", image, err)}
	}
	if !ok {
		return fmt.Sprintf("sandbox image %q does not exist on the Docker engine (build or load it, or choose another with --image or image: in task.yml)", image), nil
	}
	return "", nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
