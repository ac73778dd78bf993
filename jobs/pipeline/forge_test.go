package pipeline

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// TestFinalChecksIgnoreAgentHooks: the model breaks Add, then makes every
// later `go test` pass through `go env -w GOFLAGS=-exec=…` with a stub
// that exits 0, and plants a `timeout` and a `go` in HOME's bin. The final
// checks run in a fresh container and still fail.
func TestFinalChecksIgnoreAgentHooks(t *testing.T) {
	sandboxtest.EndToEnd(t)
	// Our image and one shaped like the public golang image, whose PATH
	// starts with GOPATH's bin.
	for name, image := range map[string]func(testing.TB) string{"ours": sandboxtest.Image, "public": sandboxtest.PublicImage} {
		t.Run(name, func(t *testing.T) {
			repo := gitRepo(t, calcFiles(false))
			res, out, _ := scenario{
				repo:  repo,
				image: image(t),
				issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
				wire:  provider.NameOpenAI,
				turns: []pt.Turn{
					call("read_file", `{"path":"calc.go"}`),
					call("edit", `{"edits":[{"path":"calc.go","old_text":"return a + b","new_text":"return a - b"}]}`),
					call("run", `{"command":"printf '#!/bin/sh\\nexit 0\\n' > /tmp/pass && chmod +x /tmp/pass && go env -w GOFLAGS=-exec=/tmp/pass && mkdir -p $HOME/go/bin $HOME/bin && cp /tmp/pass $HOME/go/bin/timeout && cp /tmp/pass $HOME/go/bin/go && cp /tmp/pass $HOME/bin/go; for d in $(echo $PATH | tr : ' '); do cp /tmp/pass $d/go 2>/dev/null; done; go test ./..."}`),
					call("finish", `{"summary":"Made Double faster. All tests pass."}`),
				},
			}.run(t)
			if res.Outcome != verify.Failed {
				t.Fatalf("outcome %s (%s), want failed: the hooks reached the final checks\n%s", res.Outcome, res.Reason, readLedger(t, out))
			}
		})
	}
}

// TestDetachedWriterCannotChangeTheCommit: a process the model detaches
// with setsid rewrites calc.go after the loop has finished. The agent's
// container is removed before the change is read, so the commit holds the
// model's edit, the one that was verified and scanned.
func TestDetachedWriterCannotChangeTheCommit(t *testing.T) {
	files := calcFiles(true)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, _, _ := scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add is wrong", Body: "Add subtracts."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}]}`),
			call("run", `{"command":"env -i setsid sh -c 'sleep 3; echo syntax error > /workspace/calc.go' > /dev/null 2>&1 < /dev/null &"}`),
			call("finish", `{"summary":"Fixed Add."}`),
		},
	}.run(t)
	if res.HeadCommit == "" {
		t.Fatalf("nothing committed: %s (%s)", res.Outcome, res.Reason)
	}
	got := gitIn(t, repo, "show", res.HeadCommit+":calc.go")
	if !strings.Contains(got, "return a + b") || strings.Contains(got, "syntax error") {
		t.Fatalf("committed calc.go is not the verified edit:\n%s", got)
	}
}
