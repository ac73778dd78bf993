package tools

// deniedReason reports whether err is the sandbox policy refusing a
// command, and why.
func deniedReason(err error) (string, bool) {
	return "", false
}
