package pipelinerun

import (
	"context"
	"errors"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

type countingRunner struct{ created int }

func (c *countingRunner) Create(context.Context, sandbox.Spec) (sandbox.Sandbox, error) {
	c.created++
	return nopSandbox{}, nil
}

type nopSandbox struct{ sandbox.Sandbox }

func (nopSandbox) DisableNetwork(context.Context) error { return nil }

func TestGuardChecksTheAgentsTreeOnly(t *testing.T) {
	leak := errors.New("leak")
	var checked []string
	bad := ""
	check := func(dir string) error {
		checked = append(checked, dir)
		if dir == bad {
			return leak
		}
		return nil
	}
	inner := &countingRunner{}
	g := &guard{Runner: inner, check: check}
	ctx := context.Background()
	sb, err := g.Create(ctx, sandbox.Spec{Workspace: "/agent"})
	if err != nil || inner.created != 1 {
		t.Fatalf("Create = %v (created %d)", err, inner.created)
	}
	// After setup's network is cut the tree is checked again: setup may
	// have fetched the hidden tests.
	bad = "/agent"
	if err := sb.DisableNetwork(ctx); !errors.Is(err, leak) {
		t.Errorf("DisableNetwork = %v, want the leak", err)
	}
	// The final verification's sandbox holds the model's own change: not
	// checked.
	if _, err := g.Create(ctx, sandbox.Spec{Workspace: "/agent"}); err != nil {
		t.Errorf("second Create = %v", err)
	}
	if len(checked) != 2 {
		t.Errorf("checked %v, want the agent's tree twice", checked)
	}
	// A leak before the sandbox starts: no container is created.
	inner = &countingRunner{}
	g = &guard{Runner: inner, check: check}
	if _, err := g.Create(ctx, sandbox.Spec{Workspace: "/agent"}); !errors.Is(err, leak) || inner.created != 0 {
		t.Errorf("Create = %v (created %d), want the leak and no container", err, inner.created)
	}
}
