package docker_test

import (
	"testing"

	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestMain builds the resident starter, so that every test runs with it
// on, as a deployment with the binary beside the worker does; a
// PATCHWRIGHT_SANDBOX_STARTER already set (such as "off") is kept. The
// engine-exec fallback has its own tests (Options.EngineExec).
func TestMain(m *testing.M) { sandboxtest.Main(m) }
