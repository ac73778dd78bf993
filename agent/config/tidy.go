package config

import "fmt"

// Values of approval.
const (
	ApprovalOff         = "off"
	ApprovalIndependent = "independent"
)

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
	return errs
}
