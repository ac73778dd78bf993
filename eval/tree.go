package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// git runs the git command line in dir with a fixed, minimal identity and
// no discovery above dir's parent, so a tree extracted under some other
// repository's directory is never mistaken for part of it. Real git is
// used because `git apply` is the reference implementation of what a
// unified diff means.
func git(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return run(ctx, dir, stdin, nil, args...)
}

// gitEnv is git with extra environment variables.
func gitEnv(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	return run(ctx, dir, nil, env, args...)
}

func run(ctx context.Context, dir string, stdin []byte, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir),
		"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
	)
	cmd.Env = append(cmd.Env, env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// mirror makes a bare clone of a remote task repository once, so every
// run and every check reads a local copy.
func mirror(ctx context.Context, url, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	_, err := git(ctx, filepath.Dir(dest), nil, "clone", "--bare", "--no-tags", "--quiet", url, dest)
	return err
}

// hasCommit reports whether repo holds commit.
func hasCommit(ctx context.Context, repo, commit string) error {
	if _, err := git(ctx, repo, nil, "cat-file", "-e", commit+"^{commit}"); err != nil {
		return fmt.Errorf("commit %s is not in %s", commit, repo)
	}
	return nil
}

// cloneAt makes a new bare repository at dest whose only branch, main, is
// commit, fetched from src. Only the history up to commit comes along, and
// src is only read.
func cloneAt(ctx context.Context, src, commit, dest string) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	if _, err := git(ctx, dest, nil, "init", "--quiet", "--bare", "--initial-branch=main"); err != nil {
		return err
	}
	_, err := git(ctx, dest, nil, "fetch", "--quiet", "--no-tags", src, commit+":refs/heads/main")
	return err
}

// exportTree writes commit's files from repo into dest, which must not
// exist, with no .git: what a fresh checkout holds. It checks out through
// a temporary index of its own, so repo's index and work tree are never
// touched; unlike git archive it ignores export-ignore attributes, which
// some repositories put on their tests.
func exportTree(ctx context.Context, repo, commit, dest string) error {
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	index := dest + ".index"
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	for _, args := range [][]string{
		{"--work-tree=" + dest, "read-tree", commit},
		{"--work-tree=" + dest, "checkout-index", "--all", "--force"},
	} {
		if _, err := gitEnv(ctx, repo, env, args...); err != nil {
			return err
		}
	}
	return nil
}

// applyPatch applies a unified diff to the tree in dir, all of it or none.
func applyPatch(ctx context.Context, dir string, patch []byte) error {
	_, err := git(ctx, dir, patch, "apply", "--whitespace=nowarn", "-")
	return err
}

// overlay writes whole files over the tree in dir, through os.Root.
func overlay(dir string, files map[string][]byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range sortedKeys(files) {
		name := filepath.FromSlash(p)
		if d := filepath.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		// A link planted where a hidden file goes must not redirect the
		// write to another file of the tree.
		if err := root.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := root.WriteFile(name, files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// applyHidden lays the task's hidden tests over the tree in dir.
func applyHidden(ctx context.Context, t *Task, dir string) error {
	if t.HiddenFiles != nil {
		return overlay(dir, t.HiddenFiles)
	}
	if err := applyPatch(ctx, dir, t.HiddenPatch); err != nil {
		return fmt.Errorf("the hidden test patch does not apply: %w", err)
	}
	return nil
}

// materialise makes the git repository of a task that ships its files as
// src/ (as the starter suite does): one commit on main with a fixed
// author, committer, date and message, so its SHA is the same on every
// machine, exactly as testdata/eval/setup.sh makes it. It returns the SHA.
func materialise(ctx context.Context, src, dest string) (string, error) {
	if err := os.CopyFS(dest, os.DirFS(src)); err != nil {
		return "", err
	}
	env := []string{
		"GIT_AUTHOR_NAME=Patchwright Eval", "GIT_AUTHOR_EMAIL=eval@patchwright.invalid",
		"GIT_COMMITTER_NAME=Patchwright Eval", "GIT_COMMITTER_EMAIL=eval@patchwright.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_GLOBAL=/dev/null",
	}
	steps := [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"-c", "core.autocrlf=false", "add", "-A"},
		{"-c", "commit.gpgsign=false", "commit", "--quiet", "-m", "base"},
		{"rev-parse", "HEAD"},
	}
	var out []byte
	for _, args := range steps {
		var err error
		if out, err = gitEnv(ctx, dest, env, args...); err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(string(out)), nil
}
