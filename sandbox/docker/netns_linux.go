package docker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// addDefaultRoute gives the network namespace at nsPath a default route
// via gw, so that a connection to an outside address reaches the host
// over the egress bridge, whose firewall refuses and logs it, instead of
// failing unseen inside the sandbox or leaving by a service network (its
// services are on its own link, and stay reachable). A default route
// already there is replaced.
func addDefaultRoute(nsPath string, gw net.IP) error {
	gw4 := gw.To4()
	if gw4 == nil {
		return fmt.Errorf("gateway %s is not IPv4", gw)
	}
	errc := make(chan error, 1)
	go func() {
		// The thread switches namespace and is never switched back:
		// it ends with the goroutine, still locked.
		runtime.LockOSThread()
		errc <- inNetns(nsPath, func() error { return routeAdd(gw4) })
	}()
	return <-errc
}

func inNetns(nsPath string, fn func() error) error {
	f, err := os.Open(nsPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", nsPath, err)
	}
	return fn()
}

// routeAdd adds "default via gw" to the main table over rtnetlink.
func routeAdd(gw net.IP) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	msg := make([]byte, unix.SizeofNlMsghdr+unix.SizeofRtMsg+8)
	binary.NativeEndian.PutUint32(msg, uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWROUTE)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_REPLACE)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	rt := msg[unix.SizeofNlMsghdr:]
	rt[0] = unix.AF_INET
	rt[4] = unix.RT_TABLE_MAIN
	rt[5] = unix.RTPROT_BOOT
	rt[6] = unix.RT_SCOPE_UNIVERSE
	rt[7] = unix.RTN_UNICAST
	a := rt[unix.SizeofRtMsg:]
	binary.NativeEndian.PutUint16(a, 8)
	binary.NativeEndian.PutUint16(a[2:], unix.RTA_GATEWAY)
	copy(a[4:], gw)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("add the default route: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("add the default route: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 || msgs[0].Header.Type != unix.NLMSG_ERROR || len(msgs[0].Data) < 4 {
		return errors.New("add the default route: no answer from the kernel")
	}
	if errno := syscall.Errno(-int32(binary.NativeEndian.Uint32(msgs[0].Data))); errno != 0 {
		return fmt.Errorf("add the default route via %s: %w", gw, errno)
	}
	return nil
}
