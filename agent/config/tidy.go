package config

import "fmt"

// Values of approval.
const (
	ApprovalOff         = "off"
	ApprovalIndependent = "independent"
)

// DefaultStaleAfterDays is stale_after_days when unset.
const DefaultStaleAfterDays = 30

// StaleAfter is StaleAfterDays with its default; 0 is off.
func (c Config) StaleAfter() int {
	if c.StaleAfterDays == nil {
		return DefaultStaleAfterDays
	}
	return *c.StaleAfterDays
}

// IndependentApproval reports whether agent pull requests carry the
// patchwright/approval check run.
func (c Config) IndependentApproval() bool { return c.Approval == ApprovalIndependent }

// tidyErrors checks the keys about a pull request's life after it opens.
func (c Config) tidyErrors() []string {
	var errs []string
	switch c.Approval {
	case "", ApprovalOff, ApprovalIndependent:
	default:
		errs = append(errs, fmt.Sprintf("approval: %q is not one of off, independent", c.Approval))
	}
	if d := c.StaleAfterDays; d != nil && (*d < 0 || *d > 3650) {
		errs = append(errs, fmt.Sprintf("stale_after_days: %d is not between 0 and 3650", *d))
	}
	return errs
}
