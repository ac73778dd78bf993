package tools

import "errors"

// policyRefusal is what the sandbox returns when its command policy
// refuses a command: an error that says why. The sandbox package's denial
// error satisfies it; matching on behaviour keeps this package free of the
// policy's internals.
type policyRefusal interface {
	error
	// DeniedReason is the one-line reason shown to the model.
	DeniedReason() string
}

// deniedReason reports whether err is the sandbox policy refusing a
// command, and why.
func deniedReason(err error) (string, bool) {
	var d policyRefusal
	if errors.As(err, &d) {
		return d.DeniedReason(), true
	}
	return "", false
}
