package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/go-git/go-git/v5/plumbing"
	"golang.org/x/text/unicode/norm"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/jobs/gitrepo"
)

// LocalBranchPrefix starts every branch LocalPublisher creates.
const LocalBranchPrefix = "agent/"

// maxSlug bounds the part of a local branch name made from the title.
const maxSlug = 50

// LocalPublisher publishes a change as a new branch agent/<slug of the
// title> in the repository the job cloned (`patchwright run --repo`),
// with -2, -3, … appended when that name is taken. It pushes a new branch
// only: the repository's working tree, index and other branches are never
// touched, and an existing branch is never moved.
type LocalPublisher struct{}

// Target picks the first free branch name.
func (LocalPublisher) Target(ctx context.Context, repo *gitrepo.Repo, job Job) (Target, error) {
	existing, err := repo.RemoteBranches(ctx)
	if err != nil {
		return Target{}, err
	}
	return Target{Branch: uniqueBranch(LocalBranchPrefix+Slug(job.Issue.Title), existing)}, nil
}

// Publish pushes the committed branch; it does nothing when nothing was
// committed.
func (LocalPublisher) Publish(ctx context.Context, repo *gitrepo.Repo, res *Result) (string, error) {
	if res.HeadCommit == "" {
		return "", nil
	}
	return "", repo.Push(ctx, res.Branch, plumbing.ZeroHash)
}

var _ Publisher = LocalPublisher{}

func uniqueBranch(base string, existing map[string]plumbing.Hash) string {
	name := base
	for n := 2; ; n++ {
		if _, taken := existing[name]; !taken && !prefixClash(name, existing) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
}

// prefixClash reports whether git could not create name because a branch
// is a directory prefix of it or it is a directory prefix of a branch
// ("agent/x" and "agent/x/y" cannot both exist).
func prefixClash(name string, existing map[string]plumbing.Hash) bool {
	for b := range existing {
		if strings.HasPrefix(b, name+"/") || strings.HasPrefix(name, b+"/") {
			return true
		}
	}
	return false
}

// Slug makes a branch-name part of a title: lower-case ASCII letters and
// digits joined by single hyphens, at most 50 bytes, cut at a word boundary
// when possible. Accents are taken off first ("crème" gives "creme"); a
// title with no such letters or digits gives "issue".
func Slug(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFD.String(strings.ToLower(title)) {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining accent of the letter before
		}
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			hyphen = false
			continue
		}
		hyphen = true
	}
	s := b.String()
	if len(s) > maxSlug {
		s = s[:maxSlug]
		if i := strings.LastIndexByte(s, '-'); i > maxSlug/2 {
			s = s[:i]
		}
		s = strings.TrimRight(s, "-")
	}
	if s == "" {
		return "issue"
	}
	return s
}

// ParseIssue reads an issue file: the first line is "# Title", the rest
// is the body. Leading blank lines are skipped; the body is trimmed.
func ParseIssue(text string) (agent.Issue, error) {
	text = strings.TrimLeft(strings.ReplaceAll(text, "\r\n", "\n"), "\n \t")
	first, rest, _ := strings.Cut(text, "\n")
	title, ok := strings.CutPrefix(strings.TrimSpace(first), "# ")
	title = strings.TrimSpace(title)
	if !ok || title == "" {
		return agent.Issue{}, errors.New(`the first line must be the title as "# Title"`)
	}
	return agent.Issue{Title: title, Body: strings.TrimSpace(rest)}, nil
}
