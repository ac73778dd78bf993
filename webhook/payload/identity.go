package payload

// identity is an event's identifying paths, the action first, and the
// indexes of those that must be present.
type identity struct {
	paths    []string
	required []int
}

// identities are, per event, the fields that tell one occurrence of the
// event apart from every other: the object's own ID (required) and the
// times it changed. A replay of a body carries the same values; two
// different occurrences differ in at least one. Values are kept verbatim
// (raw JSON), which is deterministic for the same body and needs no
// decoding.
var identities = map[string]identity{
	// An issue's updated_at moves with every label added or removed, and
	// with closing; label.name tells two labels of one change apart, and
	// assignee.id two assignees.
	"issues": {[]string{"action", "repository.id", "issue.id", "label.name", "issue.updated_at", "assignee.id"}, []int{1, 2, 4}},
	// A comment is created once; its ID is never reused.
	"issue_comment": {[]string{"action", "repository.id", "comment.id", "comment.created_at", "comment.updated_at"}, []int{1, 2}},
	// A pull request closed, reopened and closed again has a new
	// closed_at and updated_at.
	"pull_request": {[]string{"action", "repository.id", "pull_request.id", "pull_request.updated_at", "pull_request.closed_at"}, []int{1, 2, 3}},
	// A review is submitted once; its ID is never reused.
	"pull_request_review": {[]string{"action", "repository.id", "review.id", "review.submitted_at"}, []int{1, 2}},
	// An installation is deleted once (a new one has a new ID); each
	// suspension has its own suspended_at.
	"installation": {[]string{"action", "installation.id", "installation.updated_at", "installation.suspended_at"}, []int{1}},
	// The removed repositories (with their IDs) and the installation's
	// updated_at.
	"installation_repositories": {[]string{"action", "installation.id", "installation.updated_at", "repositories_removed"}, []int{1, 3}},
}

// Identity returns the action and the identifying fields of an event's
// body, verbatim. ok is false for an event with no identity here, or a
// body that lacks a required field (it cannot be told apart from others,
// so it must not be deduplicated by meaning); err for a body that is not
// JSON. A receiver that also decodes the body scans it once with Scan.
func Identity(event string, body []byte) (action string, fields []string, ok bool, err error) {
	if _, known := identities[event]; !known {
		return "", nil, false, nil
	}
	return Scan(event, body).Identity()
}
