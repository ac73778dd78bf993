package docker_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// crashedWorkerEnv makes TestCrashedWorkerHelper a worker that creates an
// allowlisted sandbox in the workspace the variable names, says so, and
// waits to be killed.
const crashedWorkerEnv = "PATCHWRIGHT_TEST_CRASHED_WORKER"

// TestCrashedWorkerHelper is the worker TestEgressReapsDeadWorkersRules
// kills; it does nothing on its own.
func TestCrashedWorkerHelper(t *testing.T) {
	ws := os.Getenv(crashedWorkerEnv)
	if ws == "" {
		t.Skip("run by TestEgressReapsDeadWorkersRules")
	}
	d := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, d, sandbox.Spec{Workspace: ws, Network: true, Egress: &sandbox.Egress{Phase: "setup"}})
	proxy := strings.TrimSpace(ok(t, sb, `echo "$HTTP_PROXY"`))
	fmt.Printf("READY %s %s\n", sb.ID(), proxy[strings.LastIndex(proxy, ":")+1:])
	select {}
}

// egressRulesOf lists the firewall rules a worker added for sandbox id
// (mangle PREROUTING, by its comment) and for its proxy on port (the
// INPUT rule that opens it).
func egressRulesOf(t *testing.T, id, port string) (sandboxRules, accept []string) {
	t.Helper()
	for _, c := range []struct {
		table, chain, match string
		into                *[]string
	}{
		{"mangle", "PREROUTING", "pw-egress:" + id[:12], &sandboxRules},
		{"filter", "INPUT", "--dport " + port + " ", &accept},
	} {
		out, err := exec.Command("iptables", "-w", "-t", c.table, "-S", c.chain).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, c.match) && strings.Contains(l, "-i "+docker.EgressBridge+" ") {
				*c.into = append(*c.into, l)
			}
		}
	}
	return sandboxRules, accept
}

// TestEgressReapsDeadWorkersRules: a worker killed with its sandbox
// running leaves its firewall rules; Reap, as at a worker's start-up,
// removes the proxy's opening at once (nothing listens behind it) and
// the sandbox's rules once the sandbox is gone, and never touches a live
// worker's.
func TestEgressReapsDeadWorkersRules(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	live := sandboxtest.New(t, d, sandbox.Spec{Network: true, Egress: &sandbox.Egress{Phase: "setup"}})
	liveProxy := strings.TrimSpace(ok(t, live, `echo "$HTTP_PROXY"`))
	livePort := liveProxy[strings.LastIndex(liveProxy, ":")+1:]

	worker := exec.Command(os.Args[0], "-test.run=^TestCrashedWorkerHelper$", "-test.v")
	worker.Env = append(os.Environ(), crashedWorkerEnv+"="+sandboxtest.Workspace(t))
	out, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	worker.Stderr = os.Stderr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	var id, port string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if _, err := fmt.Sscanf(lines.Text(), "READY %s %s", &id, &port); err == nil {
			break
		}
	}
	if id == "" {
		worker.Process.Kill()
		t.Fatalf("the worker did not start its sandbox: %v", worker.Wait())
	}
	cli := dockerClient(t)
	t.Cleanup(func() {
		cli.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true})
	})
	worker.Process.Kill()
	worker.Wait()

	dead, deadAccept := egressRulesOf(t, id, port)
	if len(dead) != 3 || len(deadAccept) != 1 {
		t.Fatalf("the killed worker's rules: sandbox %q, proxy %q; want 3 and 1", dead, deadAccept)
	}
	if _, err := d.Reap(t.Context()); err != nil {
		t.Fatal(err)
	}
	dead, deadAccept = egressRulesOf(t, id, port)
	if len(dead) != 3 || len(deadAccept) != 0 {
		t.Fatalf("after Reap, the killed worker's sandbox still running: sandbox rules %q (want 3: it runs), proxy %q (want none)", dead, deadAccept)
	}
	// Its sandbox goes, as the reaper removes it at its expiry.
	if err := cli.ContainerRemove(t.Context(), id, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if dead, _ = egressRulesOf(t, id, port); len(dead) != 0 {
		t.Fatalf("after Reap, the killed worker's sandbox gone: its rules are left: %q", dead)
	}
	if rules, accept := egressRulesOf(t, live.ID(), livePort); len(rules) != 3 || len(accept) != 1 {
		t.Fatalf("the live worker's rules: sandbox %q, proxy %q; want 3 and 1", rules, accept)
	}
}
