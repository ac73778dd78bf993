package sandboxtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// internets counts FakeInternet's namespaces in this process, so that each
// has addresses of its own.
var internets atomic.Int32

// FakeInternet serves h over HTTP from a network namespace on this
// machine that stands for the internet, and returns its base URL
// ("http://203.0.113.N:PORT"). A setup sandbox reaches it as it reaches
// the internet (forwarded and masqueraded by the host through a veth
// pair, past the setup network's firewall, which refuses only the host's
// own addresses), and no packet leaves the machine. The address comes
// from TEST-NET-3 (never routed on the internet), the veth pair's from
// the shared address space, other blocks than sandbox/docker's own test
// of the setup network uses. It needs root and iproute2; the test is
// skipped otherwise. Everything is removed when the test ends.
func FakeInternet(t testing.TB, h http.Handler) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to build a network namespace that stands for the internet")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2 (ip) to build a network namespace that stands for the internet")
	}
	n := int(internets.Add(1)) % 32
	id := fmt.Sprintf("%d%02d", os.Getpid()%1000, n)
	ns, hostIf, nsIf := "pwinet"+id, "pwi"+id+"h", "pwi"+id+"n"
	hostSide, nsSide := fmt.Sprintf("100.127.%d.1", 220+n), fmt.Sprintf("100.127.%d.2", 220+n)
	addr := fmt.Sprintf("203.0.113.%d", 10+n)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	removeLeftover(hostSide)
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf)
	t.Cleanup(func() { exec.Command("ip", "link", "del", hostIf).Run() })
	ip("link", "set", nsIf, "netns", ns)
	ip("addr", "add", hostSide+"/30", "dev", hostIf)
	ip("link", "set", hostIf, "up")
	ip("-n", ns, "addr", "add", nsSide+"/30", "dev", nsIf)
	ip("-n", ns, "link", "set", nsIf, "up")
	ip("-n", ns, "link", "set", "lo", "up")
	ip("-n", ns, "addr", "add", addr+"/32", "dev", "lo")
	ip("-n", ns, "route", "add", "default", "via", hostSide)
	ip("route", "replace", addr+"/32", "via", nsSide)
	t.Cleanup(func() { exec.Command("ip", "route", "del", addr+"/32").Run() })

	ln := listenInNamespace(t, "/run/netns/"+ns, net.JoinHostPort(addr, "0"))
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// listenInNamespace opens a TCP listener in the network namespace at
// nsPath. A socket belongs to the namespace it was made in, so only the
// thread that makes it has to switch; that thread is then thrown away.
func listenInNamespace(t testing.TB, nsPath, addr string) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	got := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f, err := os.Open(nsPath)
		if err != nil {
			got <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			got <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		got <- result{ln, err}
	}()
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.ln
}

// removeLeftover removes what a test process that was killed before its
// cleanup left holding hostSide: its host-side veth (and so the pair) and
// its namespace. Otherwise the kernel would route this test's /30 to that
// dead namespace, whose refusals look like the server's.
func removeLeftover(hostSide string) {
	out, _ := exec.Command("ip", "-o", "-4", "addr", "show", "to", hostSide+"/32").Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(fields[1], "pwi") {
			continue
		}
		name := strings.TrimSuffix(fields[1], "h")
		exec.Command("ip", "link", "del", fields[1]).Run()
		exec.Command("ip", "netns", "del", "pwinet"+strings.TrimPrefix(name, "pwi")).Run()
	}
}
