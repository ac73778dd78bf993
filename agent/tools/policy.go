package tools

import (
	"errors"

	"github.com/patchwright/patchwright/sandbox"
)

// deniedReason reports whether err is the sandbox policy refusing a
// command, and why.
func deniedReason(err error) (string, bool) {
	if d, ok := errors.AsType[*sandbox.DeniedError](err); ok {
		return d.Reason, true
	}
	return "", false
}
