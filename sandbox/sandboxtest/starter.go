package sandboxtest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchwright/patchwright/sandbox/docker"
)

// starterPkg is the resident starter's package (docs/security-details.md#the-resident-starter).
const starterPkg = "github.com/patchwright/patchwright/sandbox/docker/starter"

// Main runs a test binary's tests with the resident starter on, as a
// deployment with the binary beside the worker has it: every package whose
// tests start sandboxes calls it from its TestMain, so their sandboxes run
// commands through the starter rather than falling back, unseen, to one
// engine exec each (about 16 times slower). It builds the starter once per
// test binary (the go command's cache makes every build after the first
// take a fraction of a second) and names it in PATCHWRIGHT_SANDBOX_STARTER,
// which runners made in the tests and processes they start inherit. A
// value already set (a path, or "off" for engine execs) is kept, and under
// -short, where no sandbox starts, nothing is built. It does not return.
func Main(m *testing.M) {
	os.Exit(runWithStarter(m))
}

func runWithStarter(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if os.Getenv(docker.StarterEnv) != "" || testing.Short() {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "patchwright-starter")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, docker.StarterName)
	if err := BuildStarter(bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	os.Setenv(docker.StarterEnv, bin)
	return m.Run()
}

// BuildStarter builds the resident starter, static, into bin.
func BuildStarter(bin string) error {
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, starterPkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the sandbox starter: %v\n%s", err, out)
	}
	return nil
}
