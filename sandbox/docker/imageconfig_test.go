package docker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/registrytest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// hostileImage is what a repository may name once its registry is
// allowed: a writable VOLUME, a HEALTHCHECK that writes there, USER
// root, and HOME and PATH of its own.
func hostileImage(t *testing.T) string {
	t.Helper()
	return buildOnce(t, "patchwright-test-hostile", "FROM "+tinyImage(t)+"\n"+
		"WORKDIR /data\nRUN [\"/bin/chmod\", \"1777\", \"/data\"]\nVOLUME /data\n"+
		"HEALTHCHECK --interval=1s CMD [\"/bin/sh\", \"-c\", \"echo ran >/data/healthcheck\"]\n"+
		"USER 0\nENV HOME=/root PATH=/nowhere:/bin\n")
}

// TestImageConfigCannotWidenTheSandbox: a sandbox of an image that
// declares a VOLUME gets a tmpfs there, bounded like /tmp, not an
// anonymous volume on the host's disk; the image's HEALTHCHECK never
// runs; its USER and HOME give way to the sandbox's.
func TestImageConfigCannotWidenTheSandbox(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	cli := registrytest.Client(t)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: hostileImage(t), Workspace: sandboxtest.Workspace(t), JobID: "test-hostile-image"})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	info, err := cli.ContainerInspect(ctx, sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range info.Mounts {
		if m.Destination == "/data" {
			t.Errorf("/data is a %s mount of %s: the image's VOLUME reached the host's disk", m.Type, m.Name)
		}
	}
	if info.State.Health != nil {
		t.Errorf("the image's healthcheck runs (%s)", info.State.Health.Status)
	}
	res, err := sb.Exec(ctx, sandbox.Command{Script: `cat /proc/self/mounts; cat /proc/self/status; echo "HOME=$HOME"`})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	out := string(res.Stdout.Head)
	if !strings.Contains(out, " /data tmpfs ") || !strings.Contains(out, "size=1048576k") {
		t.Errorf("/data is not a tmpfs of the sandbox's size:\n%s", out)
	}
	if strings.Contains(out, "Uid:\t0\t") || strings.Contains(out, "HOME=/root") {
		t.Errorf("the image's USER or HOME won:\n%s", out)
	}
}
