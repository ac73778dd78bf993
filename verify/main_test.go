package verify

import (
	"testing"

	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestMain runs the tests with the resident starter built, so this
// package's sandboxes run commands as a deployment's do (see
// sandboxtest.Main).
func TestMain(m *testing.M) { sandboxtest.Main(m) }
