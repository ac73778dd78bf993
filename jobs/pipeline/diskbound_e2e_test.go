package pipeline

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// boundOf is a BoundWorkspace of size bytes.
func boundOf(size int64) func(ctx context.Context, dir string) (func() error, error) {
	return func(ctx context.Context, dir string) (func() error, error) {
		b, err := docker.NewBoundedDir(ctx, dir, dir+".img", size, sandboxtest.UID, sandboxtest.GID)
		if err != nil {
			return nil, err
		}
		return b.Close, nil
	}
}

// TestJobCacheFilledPastBound: the model's change makes the trusted
// dependency setup (fetch_dependencies) fill the job's own cache; the
// cache is on the job's bounded disk, so the write stops there, and the
// run ends saying the job's disk bound is full. On the public image
// shape: no warm cache for the engine to copy into the job's cache.
func TestJobCacheFilledPastBound(t *testing.T) {
	sandboxtest.EndToEnd(t)
	files := calcFiles(false)
	// The setup's size comes from the tree: the default branch's asks
	// for nothing, the model's change for more than the bound.
	files[".github/agent.yml"] = "setup:\n  - \"head -c $(cat fill 2>/dev/null || echo 0) /dev/zero > $HOME/.cache/fill; true\"\n" +
		"verify:\n  - name: data\n    run: test -f calc.go\n"
	cache := fmt.Sprintf("patchwright-test-fillcache-%d", os.Getpid())
	res, out, _ := scenario{
		repo:        gitRepo(t, files),
		issue:       agent.Issue{Title: "Fill", Body: "Fill the cache."},
		wire:        provider.NameOpenAI,
		image:       sandboxtest.PublicImage(t),
		cacheVolume: cache,
		bound:       boundOf(96 << 20),
		turns: []pt.Turn{
			call("write_file", `{"path":"fill","content":"200000000"}`),
			// A manifest changed: fetch_dependencies runs setup.
			call("read_file", `{"path":"go.mod"}`),
			call("write_file", `{"path":"go.mod","content":"module example.com/calc\n\ngo 1.22\n\n// Filled.\n"}`),
			call("fetch_dependencies", `{}`),
			call("finish", `{"summary":"Filled."}`),
		},
		tune: func(e *Executor) {
			t.Cleanup(func() { e.RemoveCache(context.Background(), cache) })
		},
	}.run(t)
	if !strings.Contains(res.Reason, ReasonDiskBound+": the job's disk bound of") || !strings.Contains(res.Reason, "is full") {
		t.Fatalf("outcome %s, reason %q; want the run stopped at its disk bound\n%s", res.Outcome, res.Reason, readLedger(t, out))
	}
	if !strings.Contains(readLedger(t, out), "No space left on device") {
		t.Errorf("the cache's fill did not meet the bound")
	}
}

// TestServiceFilledPastBound: the model makes a service write into its
// container's writable layer past what the job's disk bound leaves; the
// services are stopped, the model's next command fails, and the run ends
// saying why.
func TestServiceFilledPastBound(t *testing.T) {
	sandboxtest.EndToEnd(t)
	files := kvRepo(sandboxtest.ServiceImage(t))
	files[".github/agent.yml"] = strings.Replace(files[".github/agent.yml"], "run: go test ./...", "run: test -f kv.go", 1)
	fill := fmt.Sprintf(`bash -c 'exec 3<>/dev/tcp/kv/%d && echo "FILL /layer/big 120000000" >&3 && read -r a <&3 && echo "$a"'`, sandboxtest.ServicePort)
	// Until the service is gone: the bound's watch measures every few
	// seconds.
	gone := fmt.Sprintf(`until ! bash -c 'echo PING > /dev/tcp/kv/%d' 2>/dev/null; do sleep 1; done`, sandboxtest.ServicePort)
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Fill", Body: "Fill the service."},
		wire:  provider.NameOpenAI,
		bound: boundOf(96 << 20),
		// One command: the watch may stop the services while it fills.
		turns: []pt.Turn{call("run", fmt.Sprintf(`{"command":%q,"timeout_s":600}`, fill+"; "+gone))},
	}.run(t)
	want := ReasonDiskBound + ": the job's services wrote past the job's disk bound during the agent phase"
	if !strings.Contains(res.Reason, want) {
		t.Fatalf("outcome %s, reason %q; want %q\n%s", res.Outcome, res.Reason, want, readLedger(t, out))
	}
}
