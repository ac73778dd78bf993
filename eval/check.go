package eval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
)

// Sandbox users: the work tree is handed to them before a sandbox starts
// (docker.DefaultUser).
const (
	sandboxUID = 1000
	sandboxGID = 1000
)

// DefaultCheckTimeout bounds each hidden or existing test command.
const DefaultCheckTimeout = 10 * time.Minute

// command is one named shell command run on a tree.
type command struct{ Name, Run string }

// outcome is what one command did.
type outcome struct {
	command
	ExitCode int
	TimedOut bool
	Output   string
	Duration time.Duration
}

func (o outcome) passed() bool { return o.ExitCode == 0 && !o.TimedOut }

// repoSetup is what the task's repository configures at its base commit:
// the image, setup commands and, when task.yml names no existing_tests,
// the checks that stand for them.
type repoSetup struct {
	image    string
	setup    []string
	network  bool
	existing []command
}

// readSetup reads .github/agent.yml and detects the checks in the base
// tree at dir.
func readSetup(t *Task, dir string) (repoSetup, error) {
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		return repoSetup{}, err
	}
	defer ws.Close()
	cfg, err := config.Load(ws)
	if err != nil {
		return repoSetup{}, err
	}
	rs := repoSetup{image: cfg.Image, setup: cfg.Setup, network: len(cfg.Setup) > 0 && cfg.Network()}
	switch {
	case t.ExistingTests != "":
		rs.existing = []command{{"existing_tests", t.ExistingTests}}
	case len(cfg.Verify) > 0:
		for _, c := range cfg.Verify {
			rs.existing = append(rs.existing, command{c.Name, c.Run})
		}
	default:
		d, err := verify.Detect(ws, verify.DetectOptions{})
		if err != nil {
			return repoSetup{}, err
		}
		for _, c := range d.Checks {
			rs.existing = append(rs.existing, command{c.Name, c.Run})
		}
	}
	return rs, nil
}

// checker runs commands on a tree in a fresh sandbox each time.
type checker struct {
	runner  sandbox.Runner
	timeout time.Duration
	limits  sandbox.Limits
	runtime string
}

// checkJob is one run of commands on a tree: the sandbox's job ID, the
// tree and the commands.
type checkJob struct {
	id, dir string
	cmds    []command
}

// run creates a sandbox on job.dir with p's image and cache, runs p's
// repository setup and then job's commands in order, and removes the
// sandbox. An error means the commands could not be run (no sandbox, a
// failed setup), not that they failed.
func (c checker) run(ctx context.Context, p *prepared, job checkJob) ([]outcome, error) {
	jobID, image, cache, rs, dir, cmds := job.id, p.image, p.cache, p.setup, job.dir, job.cmds
	if err := sandbox.HandOver(dir, sandboxUID, sandboxGID); err != nil {
		return nil, err
	}
	sb, err := c.runner.Create(ctx, sandbox.Spec{
		Image: image, Workspace: dir, JobID: jobID, Network: rs.network, CacheVolume: cache,
		Limits: c.limits, Runtime: c.runtime,
	})
	if err != nil {
		return nil, fmt.Errorf("create sandbox (image %s): %w", image, err)
	}
	defer sb.Close()
	for _, s := range rs.setup {
		res, err := sb.Exec(ctx, sandbox.Command{Script: s, Timeout: c.timeout})
		if err != nil {
			return nil, fmt.Errorf("setup %q: %w", s, err)
		}
		if res.ExitCode != 0 || res.TimedOut {
			return nil, errSetup{fmt.Errorf("setup %q failed (exit %d): %s", s, res.ExitCode, lastLine(output(res)))}
		}
	}
	if rs.network {
		if err := sb.DisableNetwork(ctx); err != nil {
			return nil, err
		}
	}
	var out []outcome
	for _, cmd := range cmds {
		res, err := sb.Exec(ctx, sandbox.Command{Script: cmd.Run, Timeout: c.timeout})
		if err != nil {
			return nil, fmt.Errorf("run %q: %w", cmd.Run, err)
		}
		out = append(out, outcome{command: cmd, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Output: output(res), Duration: res.Duration})
	}
	return out, nil
}

// errSetup is a repository setup command that failed: the task's
// problem, not the machinery's.
type errSetup struct{ err error }

func (e errSetup) Error() string { return e.err.Error() }
func (e errSetup) Unwrap() error { return e.err }

// output is a command's stdout then stderr, with a mark where the sandbox
// dropped the middle.
func output(r sandbox.Result) string {
	var b strings.Builder
	for _, o := range []sandbox.Output{r.Stdout, r.Stderr} {
		b.Write(o.Head)
		if o.Truncated() {
			fmt.Fprintf(&b, "\n[… %d bytes not kept …]\n", o.Total-int64(len(o.Head)+len(o.Tail)))
		}
		b.Write(o.Tail)
	}
	return b.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
