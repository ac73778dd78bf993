package report

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/verify"
)

// TestRefusedInNotVerified: refused connections are listed when a check
// failed (at most five, then a count), and not when every check passed;
// one that went around the proxy is said to.
func TestRefusedInNotVerified(t *testing.T) {
	var refused []egress.Refusal
	for i := range 7 {
		refused = append(refused, egress.Refusal{Host: fmt.Sprintf("h%d.example", i), Port: 443, Phase: "setup", Command: "npm ci", Reason: "not on the allowlist"})
	}
	pass := verify.CheckResult{Name: "test", Command: "npm test", Phase: verify.Final, Ran: true, Passed: true}
	fail := verify.CheckResult{Name: "test", Command: "npm test", Phase: verify.Final, Ran: true, ExitCode: 1}
	find := func(in Input) string {
		for _, s := range NotVerified(in) {
			if strings.Contains(s, "refused connections") {
				return s
			}
		}
		return ""
	}
	if got := find(Input{Refused: refused, Final: []verify.CheckResult{pass}}); got != "" {
		t.Errorf("every check passed, yet: %s", got)
	}
	if got := find(Input{Final: []verify.CheckResult{fail}}); got != "" {
		t.Errorf("nothing refused, yet: %s", got)
	}
	got := find(Input{Refused: refused, Final: []verify.CheckResult{fail}})
	for _, want := range []string{"h0.example:443", "h4.example:443", "npm ci", "and 2 more", "network.allow"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "h5.example") {
		t.Errorf("more than five listed: %s", got)
	}
	// One that went around the proxy says so: the allowlist cannot help.
	bypass := []egress.Refusal{{Host: "192.0.2.7", Port: 9418, Phase: "setup", Command: "git fetch", Reason: "bypassed the proxy: a direct TCP connection"}}
	if got := find(Input{Refused: bypass, Final: []verify.CheckResult{fail}}); !strings.Contains(got, "`192.0.2.7:9418` around the proxy") {
		t.Errorf("a bypassing connection: %s", got)
	}
}

// TestClosedRangeRefusalsAlwaysSaid: a host refused for a private or
// container-network address is said whether or not a check failed, with
// who may open it; refusals past the run's bound are counted after the
// listed ones.
func TestClosedRangeRefusalsAlwaysSaid(t *testing.T) {
	private := egress.Refusal{Host: "redis", Port: 6379, Phase: "setup", Command: "make deps",
		Reason: "resolves to 172.18.0.2, " + egress.Rules{}.Refuses(netip.MustParseAddr("172.18.0.2"))}
	if !egress.InClosedRange(private) {
		t.Fatalf("%q is not recognised as a closed range's", private.Reason)
	}
	pass := verify.CheckResult{Name: "test", Command: "npm test", Phase: verify.Final, Ran: true, Passed: true}
	lines := strings.Join(NotVerified(Input{Refused: []egress.Refusal{private}, Final: []verify.CheckResult{pass}}), "\n")
	if !strings.Contains(lines, "`redis:6379`") || !strings.Contains(lines, "PATCHWRIGHT_EGRESS_ALLOW_CIDRS") {
		t.Errorf("the closed range's refusal is not said: %s", lines)
	}
	loop := egress.Refusal{Host: "localhost", Port: 80, Reason: "resolves to 127.0.0.1, " + egress.Rules{}.Refuses(netip.MustParseAddr("127.0.0.1"))}
	if egress.InClosedRange(loop) {
		t.Errorf("loopback counted as a range the operator may open")
	}
	fail := verify.CheckResult{Name: "test", Command: "npm test", Phase: verify.Final, Ran: true, ExitCode: 1}
	lines = strings.Join(NotVerified(Input{Refused: []egress.Refusal{private, loop}, RefusedDropped: "and 7 more refusals to 2 hosts", Final: []verify.CheckResult{fail}}), "\n")
	if !strings.Contains(lines, "; and 7 more refusals to 2 hosts.") {
		t.Errorf("the dropped refusals are not counted: %s", lines)
	}
}
