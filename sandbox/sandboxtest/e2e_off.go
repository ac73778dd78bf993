//go:build !e2e

package sandboxtest

const endToEnd = false
