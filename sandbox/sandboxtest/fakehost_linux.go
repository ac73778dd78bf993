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

var fakeHosts atomic.Int32

// FakeHost serves h on a machine that stands for one on the internet: a
// network namespace of this machine, reached from the host through a
// veth pair whose far end (an address of the benchmarking range,
// 198.18.0.0/15, which the internet does not route and the egress proxy,
// unlike private and shared ranges, does not refuse) is the server's
// address. It
// returns that "ip:port". Nothing leaves this machine. It needs root and
// iproute2, and skips the test otherwise.
func FakeHost(t testing.TB, h http.Handler) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to build a network namespace that stands for a host on the internet")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2 (ip) to build a network namespace")
	}
	// A /30 of its own per process and call: test binaries run at once.
	n := (os.Getpid()*13 + int(fakeHosts.Add(1))) % (1 << 15)
	base := 198<<24 | 18<<16 | n<<2 // 198.18.0.0/15, one /30 each
	ipOf := func(i int) string {
		v := base + i
		return fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&255, v>>8&255, v&255)
	}
	hostSide, nsSide := ipOf(1), ipOf(2)
	ns, hostIf, nsIf := fmt.Sprintf("pwfh%d", n), fmt.Sprintf("pwfh%dh", n), fmt.Sprintf("pwfh%dn", n)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
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
	ip("-n", ns, "route", "add", "default", "via", hostSide)

	ln, err := ListenInNS("/run/netns/"+ns, net.JoinHostPort(nsSide, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// ListenInNS opens a TCP listener in the network namespace at nsPath. A
// socket belongs to the namespace it was made in, so only the thread that
// makes it switches; that thread is then thrown away.
func ListenInNS(nsPath, addr string) (net.Listener, error) {
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
	return r.ln, r.err
}
