package pipeline

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// kvRepo is a Go module whose test stores and reads a key on the kv
// service (sandboxtest.ServiceImage) by its name; Key has a bug.
func kvRepo(image string) map[string]string {
	return map[string]string{
		"go.mod": "module example.com/kv\n\ngo 1.22\n",
		"kv.go":  "package kv\n\n// Key is the stored name of a user's record.\nfunc Key(user string) string { return \"usr:\" + user }\n",
		"kv_test.go": `package kv

import (
	"bufio"
	"fmt"
	"net"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	c, err := net.Dial("tcp", "kv:6379")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	fmt.Fprintf(c, "SET %s ann\n", Key("ann"))
	r.ReadString('\n')
	fmt.Fprintf(c, "GET user:ann\n")
	got, _ := r.ReadString('\n')
	if got != "ann\n" {
		t.Fatalf("GET user:ann = %q", got)
	}
}
`,
		".github/agent.yml": fmt.Sprintf(`services:
  - name: kv
    image: %s
    environment: {MODE: test}
    health: /kvserver -check
verify:
  - name: test
    run: go test ./...
`, image),
	}
}

// TestPipelineServices: the repository's tests use a service container
// by name; the baseline fails on the bug, the fix passes, so the outcome
// is verified. The agent's commands reach the service and not a host
// outside; the service's log is in the ledger.
func TestPipelineServices(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := sandboxtest.ServiceImage(t)
	outside := sandboxtest.FakeHost(t, http.NotFoundHandler())
	host, port, _ := strings.Cut(outside, ":")
	probe := fmt.Sprintf(`bash -c 'echo PING > /dev/tcp/kv/6379' && echo reached-kv; timeout 5 bash -c 'echo > /dev/tcp/%s/%s' 2>/dev/null || echo blocked-outside`, host, port)
	res, out, _ := scenario{
		repo:  gitRepo(t, kvRepo(image)),
		issue: agent.Issue{Title: "Keys use the wrong prefix", Body: "Records are stored as usr:NAME; they must be user:NAME."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", fmt.Sprintf(`{"command":%q}`, probe)),
			call("read_file", `{"path":"kv.go"}`),
			call("edit", `{"edits":[{"path":"kv.go","old_text":"\"usr:\"","new_text":"\"user:\""}]}`),
			call("finish", `{"summary":"Keys use the user: prefix."}`),
		},
	}.run(t)
	ledgerText := readLedger(t, out)
	if res.Outcome != verify.Verified {
		t.Log(ledgerText)
		t.Errorf("outcome %s (%s), want verified; checks %+v", res.Outcome, res.Reason, res.Checks)
	}
	for _, want := range []string{"reached-kv", "blocked-outside", `"type":"service_log"`, "kvserver: ready"} {
		if !strings.Contains(ledgerText, want) {
			t.Errorf("the ledger has no %q", want)
		}
	}
}
