//go:build e2e && !race

package soak

// raceTest says whether this test binary was built with -race, so that
// the full-stack soak builds its patchwright binary the same way.
const raceTest = false
