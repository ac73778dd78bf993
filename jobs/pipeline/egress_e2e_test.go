package pipeline

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// fetchCmd fetches url with Python's urllib, which uses HTTP_PROXY as the
// package managers do.
func fetchCmd(url string) string {
	return fmt.Sprintf(`python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('%s', timeout=10).read().decode())"`, url)
}

// TestPipelineEgressAllowlist: setup reaches a host that network.allow
// names and is refused another, and a raw TCP connection that ignores
// the proxy, even to the allowed host, is refused; both refusals are in
// the ledger (host, port, phase, command), and, since a check then
// failed, in the body's "Not verified". The hosts are network namespaces
// of this machine.
func TestPipelineEgressAllowlist(t *testing.T) {
	sandboxtest.EndToEnd(t)
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "served "+r.URL.Path) })
	allowed, other := sandboxtest.FakeHost(t, serve), sandboxtest.FakeHost(t, serve)
	refusedCmd := fetchCmd("http://"+other+"/extra") + " > extra.txt || true"
	// bash's /dev/tcp knows no proxy: straight to the address.
	bypassCmd := fmt.Sprintf("bash -c 'echo hi > /dev/tcp/%s' 2>/dev/null || true", strings.Replace(allowed, ":", "/", 1))
	files := calcFiles(true)
	files[".github/agent.yml"] = fmt.Sprintf(`network:
  allow: ['%s']
setup:
  - %q
  - %q
  - %q
verify:
  - name: data
    run: grep -q 'served /greeting' greeting.txt && test -s extra.txt
`, allowed, fetchCmd("http://"+allowed+"/greeting")+" > greeting.txt", refusedCmd, bypassCmd)
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Nothing", Body: "Nothing to do."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{call("finish", `{"summary":"Nothing to change."}`)},
		// The operator allows open networks, and the repository asks for
		// none: the allowlist applies.
		tune: func(e *Executor) { e.AllowOpenNetwork = true },
	}.run(t)
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var refused []egress.Refusal
	setupOK := 0
	for _, rec := range log.Records {
		p, err := rec.Payload()
		if err != nil {
			continue
		}
		switch p := p.(type) {
		case *ledger.EgressRefused:
			refused = append(refused, egress.Refusal(*p))
		case *ledger.Command:
			if p.Tool == "setup" && p.ExitCode == 0 {
				setupOK++
			}
		}
	}
	host, port, _ := net.SplitHostPort(other)
	allowedHost, allowedPort, _ := net.SplitHostPort(allowed)
	want := fmt.Sprint([]egress.Refusal{
		{Host: host, Port: atoiT(t, port), Phase: "setup", Command: refusedCmd, Reason: "not on the allowlist"},
		{Host: allowedHost, Port: atoiT(t, allowedPort), Phase: "setup", Command: bypassCmd, Reason: "bypassed the proxy: a direct TCP connection"},
	})
	if fmt.Sprint(refused) != want || setupOK != 3 {
		t.Fatalf("ledger: refusals %v (want %s), %d setup commands succeeded (want 3); outcome %s %s", refused, want, setupOK, res.Outcome, res.Reason)
	}
	body := readBody(t, out)
	if !strings.Contains(body, "refused connections") || !strings.Contains(body, other) || !strings.Contains(body, allowed) {
		t.Fatalf("the body does not list the refused connections to %s and %s:\n%s", other, allowed, body)
	}
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPipelineEgressFloodBounded: a repository whose network.allow names
// a private address gets it refused, recorded and said in the body; a
// setup command that then floods UDP around the proxy to thousands of
// ports (each a refusal of its own) leaves at most maxRefusals refusals
// in the ledger, then a summary that counts the rest, and the body says
// how many were not recorded. The flood goes to a network namespace of
// this machine.
func TestPipelineEgressFloodBounded(t *testing.T) {
	sandboxtest.EndToEnd(t)
	target := sandboxtest.FakeHost(t, http.NotFoundHandler())
	ip, _, _ := net.SplitHostPort(target)
	private := "10.255.255.1:8000"
	privateCmd := fetchCmd("http://"+private+"/") + " || true"
	const packets = 3000
	flood := fmt.Sprintf(`python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); [s.sendto(b'x', ('%s', 20000+i)) for i in range(%d)]"`, ip, packets)
	files := calcFiles(true)
	files[".github/agent.yml"] = fmt.Sprintf(`network:
  allow: ['%s']
setup:
  - %q
  - %q
verify:
  - name: data
    run: test -s data.txt
`, private, privateCmd, flood)
	res, out, _ := scenario{
		repo:  gitRepo(t, files),
		issue: agent.Issue{Title: "Nothing", Body: "Nothing to do."},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{call("finish", `{"summary":"Nothing to change."}`)},
	}.run(t)
	path := filepath.Join(out, FileLedger)
	log, err := ledger.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var refused []egress.Refusal
	var dropped *ledger.EgressRefusalsDropped
	for _, rec := range log.Records {
		switch p, _ := rec.Payload(); p := p.(type) {
		case *ledger.EgressRefused:
			refused = append(refused, egress.Refusal(*p))
		case *ledger.EgressRefusalsDropped:
			dropped = p
		}
	}
	if len(refused) == 0 || refused[0].Host != "10.255.255.1" || !strings.Contains(refused[0].Reason, "a private address") {
		t.Fatalf("the private address was not refused first: %+v (outcome %s %s)", refused[:min(len(refused), 3)], res.Outcome, res.Reason)
	}
	if len(refused) != maxRefusals || dropped == nil || dropped.Count < 1 || dropped.Count > packets || dropped.Hosts != 1 {
		t.Fatalf("%d refusals recorded, summary %+v; want %d and the rest counted", len(refused), dropped, maxRefusals)
	}
	if st, err := os.Stat(path); err != nil || st.Size() > 512<<10 {
		t.Fatalf("ledger of %v bytes (%v), want it bounded", st.Size(), err)
	}
	body := readBody(t, out)
	if !strings.Contains(body, private) || !strings.Contains(body, fmt.Sprintf("and %d more refusals to 1 host", dropped.Count)) {
		t.Fatalf("the body does not say the private refusal and the dropped count:\n%s", body)
	}
}
