package jobs

import "fmt"

// RebaseID is the task ID (and DeliveryID) of the update of pull request
// pr to the base commit base: one update per pull request and base
// commit, however many deliveries report the push.
func RebaseID(repo Issue, pr int, base string) string {
	return fmt.Sprintf("rebase-%d-%s-%s-%d-%s", repo.InstallationID, repo.Owner, repo.Repo, pr, base)
}
