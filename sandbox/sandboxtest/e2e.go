package sandboxtest

import "testing"

// EndToEnd skips t unless the tests were built with the e2e tag. The long
// end-to-end tests (whole pipeline runs, several real repositories, the
// GitHub path through workers) take most of the suite's time, so a
// developer's `go test ./...` leaves them out and `.ci/run` runs them all
// with `go test -tags e2e ./...`.
func EndToEnd(t testing.TB) {
	t.Helper()
	if !endToEnd {
		t.Skip("long end-to-end test: run with `go test -tags e2e`")
	}
}
