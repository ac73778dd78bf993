package docker_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchwright/patchwright/sandbox/docker"
)

// TestMain builds the resident starter, so that every test runs with it
// on, as a deployment with the binary beside the worker does; a
// PATCHWRIGHT_SANDBOX_STARTER already set (such as "off") is kept.
func TestMain(m *testing.M) {
	if os.Getenv(docker.StarterEnv) == "" {
		dir, err := os.MkdirTemp("", "starter")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		bin := filepath.Join(dir, docker.StarterName)
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./starter")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build the starter: %v\n%s", err, out)
			os.Exit(2)
		}
		os.Setenv(docker.StarterEnv, bin)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
