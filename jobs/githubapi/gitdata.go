package githubapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// A commit made through the Git Data API (blobs, a tree on the parent's
// tree, a commit, then the branch) is signed by GitHub and shows as
// verified, which branch rules that require signed commits accept. GitHub
// signs it only when the request names no author, committer or
// signature: the app's bot is then both.

// Bounds of CreateCommit. GitHub takes blobs up to 100 MB; every file is
// one request, so a change of many files would spend the installation's
// hourly quota (5,000 requests) on one commit. Past either bound the
// caller pushes with git instead, unsigned.
const (
	MaxBlobBytes      = 100 << 20
	MaxCommitAPIFiles = 1000
)

// ErrTooLargeForAPI is what CreateCommit returns, before any request, for
// a change past MaxBlobBytes or MaxCommitAPIFiles.
var ErrTooLargeForAPI = errors.New("the change is too large to commit through GitHub's API")

// ErrRefMoved is what CreateCommit wraps when the branch is not where the
// caller expected it: someone else pushed to it (or created it).
var ErrRefMoved = errors.New("the branch moved")

// NewCommit is a commit to make on Branch.
type NewCommit struct {
	Branch string
	// Expected is where Branch is now; "" means it must not exist.
	Expected string
	// Parent is the commit's parent and BaseTree the tree Files are laid
	// on: Parent's, or Merged's for a merge.
	Parent, BaseTree string
	// Merged is a merge commit's second parent (the base merged in); ""
	// for a commit with one parent.
	Merged  string
	Message string
	Files   []CommitFile
}

// CommitFile is one path of a NewCommit.
type CommitFile struct {
	Path string
	// Mode is git's: "100644", "100755" (executable), "120000" (a
	// symlink, whose content is its target). Empty deletes the path.
	Mode string
	Size int64
	// Open reads the content; unused for a deletion.
	Open func() (io.ReadCloser, error)
}

// CreateCommit makes c on the remote and moves c.Branch to it as
// compare-and-swap: a new branch is created (refused if it exists); a
// branch at c.Parent is updated without force (refused unless a fast
// forward, so a push made meanwhile is kept); a branch elsewhere is
// force-updated only while it is at c.Expected, in one request that
// GitHub compares and swaps (swapRef). It returns the
// commit's SHA as GitHub made it (not the clone's: GitHub's signature and
// time differ).
func (a *App) CreateCommit(ctx context.Context, repo tasks.Issue, c NewCommit) (string, error) {
	if len(c.Files) > MaxCommitAPIFiles {
		return "", fmt.Errorf("%w: %d files, over %d", ErrTooLargeForAPI, len(c.Files), MaxCommitAPIFiles)
	}
	for _, f := range c.Files {
		if f.Size > MaxBlobBytes {
			return "", fmt.Errorf("%w: %s has %d bytes, over %d", ErrTooLargeForAPI, f.Path, f.Size, MaxBlobBytes)
		}
	}
	gh, err := a.Installation(repo.InstallationID)
	if err != nil {
		return "", err
	}
	entries, err := createBlobs(ctx, gh, repo, c.Files)
	if err != nil {
		return "", err
	}
	tree, _, err := gh.Git.CreateTree(ctx, repo.Owner, repo.Repo, c.BaseTree, entries)
	if err != nil {
		return "", fmt.Errorf("create a tree on %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	made, _, err := gh.Git.CreateCommit(ctx, repo.Owner, repo.Repo, &github.Commit{
		Message: github.String(c.Message), Tree: &github.Tree{SHA: tree.SHA},
		Parents: parents(c),
	}, nil)
	if err != nil {
		return "", fmt.Errorf("create a commit on %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	if err := moveBranch(ctx, gh, repo, c, made.GetSHA()); err != nil {
		return "", err
	}
	return made.GetSHA(), nil
}

// createBlobs uploads each file as a base64 blob (binary files survive,
// and a symlink's blob is its target) and returns the tree's entries; a
// deletion is an entry without a SHA, which go-github sends as null.
func createBlobs(ctx context.Context, gh *github.Client, repo tasks.Issue, files []CommitFile) ([]*github.TreeEntry, error) {
	var entries []*github.TreeEntry
	for _, f := range files {
		e := &github.TreeEntry{Path: github.String(f.Path), Mode: github.String(f.Mode), Type: github.String("blob")}
		if f.Mode == "" {
			e.Mode = github.String("100644")
			entries = append(entries, e)
			continue
		}
		content, err := readAll(f)
		if err != nil {
			return nil, err
		}
		blob, _, err := gh.Git.CreateBlob(ctx, repo.Owner, repo.Repo, &github.Blob{
			Content: github.String(base64.StdEncoding.EncodeToString(content)), Encoding: github.String("base64")})
		if err != nil {
			return nil, fmt.Errorf("create a blob for %s on %s/%s: %w", f.Path, repo.Owner, repo.Repo, err)
		}
		e.SHA = blob.SHA
		entries = append(entries, e)
	}
	return entries, nil
}

func readAll(f CommitFile) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	return b, nil
}

// moveBranch points c.Branch at sha as CreateCommit says.
func moveBranch(ctx context.Context, gh *github.Client, repo tasks.Issue, c NewCommit, sha string) error {
	ref := "refs/heads/" + c.Branch
	target := &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}
	var err error
	switch c.Expected {
	case "":
		_, _, err = gh.Git.CreateRef(ctx, repo.Owner, repo.Repo, target)
	case c.Parent:
		_, _, err = gh.Git.UpdateRef(ctx, repo.Owner, repo.Repo, target, false)
	default:
		// A stale branch (not at the parent: an earlier run's, on an
		// older base) is replaced by a forced update that holds only
		// while it is still at c.Expected. REST's force has no such
		// condition, so GraphQL's updateRefs (beforeOid) does it.
		return swapRef(ctx, gh, repo, c, sha)
	}
	if err != nil {
		return refMoved(c, fmt.Errorf("move %s of %s/%s to %s: %w", c.Branch, repo.Owner, repo.Repo, sha, err))
	}
	return nil
}

// refMoved wraps ErrRefMoved around GitHub's answers that mean the branch
// is not where it was expected: it exists already, the update is not a
// fast forward, it is gone. Other answers (a rule that refuses the
// commit, a 5xx) are returned as they are.
func refMoved(c NewCommit, err error) error {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return err
	}
	switch {
	case er.Response.StatusCode == http.StatusNotFound && c.Expected != "",
		er.Response.StatusCode == http.StatusUnprocessableEntity &&
			(says(er, "reference already exists") || says(er, "not a fast forward") || says(er, "reference does not exist")):
		return fmt.Errorf("%w: %v", ErrRefMoved, err)
	}
	return err
}

// updateRefsMutation moves one ref with GitHub's own compare-and-swap:
// the update is refused unless the ref is at $before, checked under the
// ref's lock, so a push between a look and the update cannot be lost.
const updateRefsMutation = `mutation($repositoryId: ID!, $name: GitRefname!, $before: GitObjectID!, $after: GitObjectID!) {
  updateRefs(input: {repositoryId: $repositoryId, refUpdates: [{name: $name, beforeOid: $before, afterOid: $after, force: true}]}) { clientMutationId }
}`

// swapRef force-updates c.Branch to sha only while it is at c.Expected.
// A refusal is told apart by reading the branch afterwards (GitHub's
// wording of it is not documented): gone or elsewhere is ErrRefMoved;
// still at c.Expected, the error is returned as it is (a rule, a 5xx).
func swapRef(ctx context.Context, gh *github.Client, repo tasks.Issue, c NewCommit, sha string) error {
	r, _, err := gh.Repositories.Get(ctx, repo.Owner, repo.Repo)
	if err != nil {
		return fmt.Errorf("get repository %s/%s: %w", repo.Owner, repo.Repo, err)
	}
	ref := "refs/heads/" + c.Branch
	vars := map[string]any{"repositoryId": r.GetNodeID(), "name": ref, "before": c.Expected, "after": sha}
	var out struct{}
	uerr := graphql(ctx, gh, updateRefsMutation, vars, &out)
	if uerr == nil {
		return nil
	}
	uerr = fmt.Errorf("move %s of %s/%s from %s to %s: %w", c.Branch, repo.Owner, repo.Repo, c.Expected, sha, uerr)
	cur, _, err := gh.Git.GetRef(ctx, repo.Owner, repo.Repo, ref)
	if err != nil {
		return refMoved(c, errors.Join(uerr, err))
	}
	if at := cur.GetObject().GetSHA(); at != c.Expected {
		return fmt.Errorf("%w: %s is at %s, expected %s: %v", ErrRefMoved, c.Branch, at, c.Expected, uerr)
	}
	return uerr
}

// parents are c's parents as the API takes them: Parent, then Merged for
// a merge.
func parents(c NewCommit) []*github.Commit {
	ps := []*github.Commit{{SHA: github.String(c.Parent)}}
	if c.Merged != "" {
		ps = append(ps, &github.Commit{SHA: github.String(c.Merged)})
	}
	return ps
}
