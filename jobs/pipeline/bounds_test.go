package pipeline

import (
	"runtime"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox/sandboxtest"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/verify"
)

// TestSparseFilesStopTheRun: files that cost the sandbox nothing (sparse,
// 10 MiB each, just under the per-file bound) add up past the change's
// byte bound. The run stops as the change's failure, with nothing
// committed, and the worker held no more than the bound of them.
func TestSparseFilesStopTheRun(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	res, out, _ := scenario{
		repo:           repo,
		maxChangeBytes: 40 << 20,
		alone:          true,
		issue:          agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:           provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"for i in $(seq 1 30); do truncate -s 10M sparse$i; done"}`),
			call("finish", `{"summary":"Done."}`),
		},
	}.run(t)
	if res.Outcome != verify.Stopped || !strings.Contains(res.Reason, ReasonChangeTooLarge) {
		t.Fatalf("outcome %s (%s), want stopped with %s\n%s", res.Outcome, res.Reason, ReasonChangeTooLarge, readLedger(t, out))
	}
	if res.HeadCommit != "" {
		t.Errorf("committed %s", res.HeadCommit)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// 300 MiB of sparse files; the bound is 40 MiB. Reading them all, as
	// before the bound, allocates at least twice their size (each file's
	// buffer grows as it is read); the margin covers the rest of the run,
	// the race detector's own allocations included (254 MiB seen under
	// -race), and stays below that.
	if grown := int64(after.TotalAlloc - before.TotalAlloc); grown > 450<<20 {
		t.Errorf("the run allocated %d MiB reading a change bounded at 40 MiB", grown>>20)
	}
}

// TestDeepTreeStopsTheRun: a tree 2,000 directories deep, made in a
// second, is the change's failure (stopped, not an infrastructure error
// that would run the model again).
func TestDeepTreeStopsTheRun(t *testing.T) {
	sandboxtest.EndToEnd(t)
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"for i in $(seq 1 2000); do mkdir d && cd d || exit 1; done; echo x > f"}`),
			call("finish", `{"summary":"Done."}`),
		},
	}.run(t)
	if res.Outcome != verify.Stopped || !strings.Contains(res.Reason, ReasonChangeTooLarge) {
		t.Fatalf("outcome %s (%s), want stopped with %s\n%s", res.Outcome, res.Reason, ReasonChangeTooLarge, readLedger(t, out))
	}
}

// TestWedgedSandboxStopsTheRun: the model leaves a process that freezes
// every process it can reach, the cleanup helper included. The sandbox is
// killed for it, and the run stops as its own failure (sandbox_wedged),
// not as an infrastructure error that would run the model again.
func TestWedgedSandboxStopsTheRun(t *testing.T) {
	sandboxtest.EndToEnd(t)
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"env -i setsid sh -c 'while :; do kill -STOP -1; done' </dev/null >/dev/null 2>&1 & sleep 1"}`),
		},
	}.run(t)
	if res.Outcome != verify.Stopped || !strings.Contains(res.Reason, ReasonSandboxWedged) {
		t.Fatalf("outcome %s (%s), want stopped with %s\n%s", res.Outcome, res.Reason, ReasonSandboxWedged, readLedger(t, out))
	}
}
