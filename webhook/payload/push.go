package payload

// Push is a push event: a branch (or tag) of a repository moved.
type Push struct {
	// Ref is the full ref, "refs/heads/main" for a branch.
	Ref string
	// After is the commit the ref points at now (all zeros when Deleted).
	After   string
	Deleted bool
	// DefaultBranch is repository.default_branch.
	DefaultBranch string
	Repo          Repo
	Sender        User
	Installation  int64
}

var pushPaths = append([]string{"ref", "after", "deleted", "repository.default_branch"}, whereWho...)

// ParsePush decodes a push event.
func ParsePush(body []byte) (Push, error) { return Scan("push", body).Push() }

// Push decodes a scanned push event.
func (doc *Doc) Push() (Push, error) {
	var e Push
	d, err := doc.decoder("push")
	if err != nil {
		return e, err
	}
	d.str(&e.Ref)
	d.str(&e.After)
	d.boolean(&e.Deleted)
	d.str(&e.DefaultBranch)
	d.whereWho(&e.Repo, &e.Sender, &e.Installation)
	return e, d.err
}
