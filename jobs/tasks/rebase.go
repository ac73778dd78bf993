package tasks

import (
	"fmt"
	"regexp"
)

// RebaseID is the task ID (and DeliveryID) of the update of pull request
// pr to the base commit base: one update per pull request and base
// commit, however many deliveries report the push.
func RebaseID(repo Issue, pr int, base string) string {
	return fmt.Sprintf("rebase-%d-%s-%s-%d-%s", repo.InstallationID, repo.Owner, repo.Repo, pr, base)
}

// MergeableUpdateID is the task ID (and DeliveryID) of the update of pull
// request pr found behind or conflicting (mergeable_state) on a check of
// its head: one per head, however many checks report it.
func MergeableUpdateID(repo Issue, pr int, head string) string {
	return fmt.Sprintf("mergeable-%d-%s-%s-%d-%s", repo.InstallationID, repo.Owner, repo.Repo, pr, head)
}

// branchNameRE accepts the branch names a base can have and nothing a
// merge request could read as anything else: no leading '-', no "..".
var branchNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}$`)
