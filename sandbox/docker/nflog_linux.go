package docker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The firewall log: packets of allowlisted sandboxes that go around the
// proxy (a raw connection to an address, UDP, a DNS query to a server of
// their own) are refused by the firewall as before, and a rule ahead of
// the refusal copies each new flow's first packet to an NFLOG group this
// process reads over netlink. So a bypassing connection still fails at
// once, and is recorded with the sandbox and command that tried it.
//
// Each worker binds a group of its own: the kernel lets one socket bind a
// group and frees it when that socket goes, so a crashed worker's group
// is free again and a live one's is never shared.

// nfnetlink_log's message types and attributes (linux/netfilter/
// nfnetlink_log.h); x/sys/unix does not name them.
const (
	nfulnlMsgPacket = 0
	nfulnlMsgConfig = 1

	nfulaPayload = 9
	nfulaPrefix  = 10

	nfulaCfgCmd     = 1
	nfulaCfgMode    = 2
	nfulaCfgQthresh = 5

	nfulnlCfgCmdBind = 1
	nfulnlCopyPacket = 2
)

// nflogGroups are the groups tried, first free first.
const (
	nflogGroupFirst = 0x7057 // "pW"
	nflogGroups     = 256
	// nflogCopy is how much of each packet is copied: the IP and UDP
	// headers and a DNS question.
	nflogCopy = 512
)

// bypass is one logged packet: who sent it (the rule's prefix) and where
// it went.
type bypass struct {
	prefix string
	ip     string
	port   int
	reason string
}

// nflog reads one NFLOG group. It is safe for concurrent use.
type nflog struct {
	f      *os.File
	conn   syscall.RawConn
	group  uint16
	handle func(bypass)

	mu      sync.Mutex
	seq     uint32
	pending map[uint32]chan error
	done    chan struct{} // closed when the reader ends
}

// openNFLOG binds the first free group and calls handle, from its reader
// goroutine, for each packet logged to it.
func openNFLOG(handle func(bypass)) (*nflog, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("firewall log: netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("firewall log: bind netlink socket: %w", err)
	}
	// A flood must not fill the socket and hide the refusals after it.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	f := os.NewFile(uintptr(fd), "nflog")
	conn, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &nflog{f: f, conn: conn, handle: handle, pending: map[uint32]chan error{}, done: make(chan struct{})}
	go l.read()
	for g := range nflogGroups {
		l.group = uint16(nflogGroupFirst + g)
		err = l.request(context.Background(), cfgCmd(nfulnlCfgCmdBind))
		if err == nil {
			break
		}
	}
	if err != nil {
		l.close()
		return nil, fmt.Errorf("firewall log: no free NFLOG group from %d to %d: %w", nflogGroupFirst, nflogGroupFirst+nflogGroups-1, err)
	}
	// One packet a message: the kernel's default batches up to 100 for a
	// second, and flush relies on each being queued as it is logged.
	qthresh := make([]byte, 4)
	binary.BigEndian.PutUint32(qthresh, 1)
	if err := l.request(context.Background(), append(cfgMode(), attr(nfulaCfgQthresh, qthresh)...)); err != nil {
		l.close()
		return nil, fmt.Errorf("firewall log: copy mode of NFLOG group %d: %w", l.group, err)
	}
	return l, nil
}

func (l *nflog) close() error { return l.f.Close() }

// flush returns once every packet logged before the call has been
// handled: the kernel queues a log message as it logs the packet (ahead
// of refusing it), so the answer to a request sent now comes after them.
func (l *nflog) flush(ctx context.Context) error { return l.request(ctx, cfgMode()) }

// cfgCmd is the NFULA_CFG_CMD attribute.
func cfgCmd(cmd byte) []byte { return attr(nfulaCfgCmd, []byte{cmd}) }

// cfgMode is the NFULA_CFG_MODE attribute: copy nflogCopy bytes of each
// packet.
func cfgMode() []byte {
	v := make([]byte, 6)
	binary.BigEndian.PutUint32(v, nflogCopy)
	v[4] = nfulnlCopyPacket
	return attr(nfulaCfgMode, v)
}

func attr(typ uint16, v []byte) []byte {
	b := make([]byte, 4+len(v), (4+len(v)+3)&^3)
	binary.NativeEndian.PutUint16(b, uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	copy(b[4:], v)
	return b[:cap(b)]
}

// request sends a config message for the group and waits for the
// kernel's answer.
func (l *nflog) request(ctx context.Context, attrs []byte) error {
	l.mu.Lock()
	l.seq++
	seq := l.seq
	ack := make(chan error, 1)
	l.pending[seq] = ack
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.pending, seq)
		l.mu.Unlock()
	}()
	msg := make([]byte, unix.SizeofNlMsghdr+4, unix.SizeofNlMsghdr+4+len(attrs))
	msg = append(msg, attrs...)
	binary.NativeEndian.PutUint32(msg, uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], unix.NFNL_SUBSYS_ULOG<<8|nfulnlMsgConfig)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], seq)
	// nfgenmsg: family AF_UNSPEC, version 0, the group in network order.
	binary.BigEndian.PutUint16(msg[unix.SizeofNlMsghdr+2:], l.group)
	var serr error
	err := l.conn.Write(func(fd uintptr) bool {
		serr = unix.Sendto(int(fd), msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		return serr != unix.EAGAIN
	})
	if err = errors.Join(err, serr); err != nil {
		return err
	}
	select {
	case err := <-ack:
		return err
	case <-l.done:
		return errors.New("firewall log closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read handles the socket's messages until it is closed.
func (l *nflog) read() {
	defer close(l.done)
	buf := make([]byte, 1<<16)
	for {
		var n int
		var rerr error
		err := l.conn.Read(func(fd uintptr) bool {
			n, _, rerr = unix.Recvfrom(int(fd), buf, 0)
			return rerr != unix.EAGAIN
		})
		if err != nil {
			return // closed
		}
		if rerr != nil {
			// ENOBUFS: packets were lost in a flood; later ones still come.
			continue
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			continue
		}
		for _, m := range msgs {
			l.message(m)
		}
	}
}

func (l *nflog) message(m syscall.NetlinkMessage) {
	switch {
	case m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4:
		var err error
		if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
			err = syscall.Errno(errno)
		}
		l.mu.Lock()
		ack := l.pending[m.Header.Seq]
		l.mu.Unlock()
		if ack != nil {
			ack <- err
		}
	case m.Header.Type == unix.NFNL_SUBSYS_ULOG<<8|nfulnlMsgPacket && len(m.Data) >= 4:
		var prefix string
		var payload []byte
		for a := m.Data[4:]; len(a) >= 4; {
			n := int(binary.NativeEndian.Uint16(a))
			if n < 4 || n > len(a) {
				break
			}
			switch binary.NativeEndian.Uint16(a[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER) {
			case nfulaPrefix:
				prefix = strings.TrimRight(string(a[4:n]), "\x00")
			case nfulaPayload:
				payload = a[4:n]
			}
			a = a[min((n+3)&^3, len(a)):]
		}
		if b, ok := parsePacket(payload); ok && prefix != "" {
			b.prefix = prefix
			l.handle(b)
		}
	}
}

// parsePacket reads an IPv4 packet's destination and protocol, and a DNS
// query's name.
func parsePacket(p []byte) (bypass, bool) {
	if len(p) < 20 || p[0]>>4 != 4 {
		return bypass{}, false
	}
	hl := int(p[0]&15) * 4
	b := bypass{ip: net.IP(p[16:20]).String()}
	proto := p[9]
	if (proto == unix.IPPROTO_TCP || proto == unix.IPPROTO_UDP) && len(p) >= hl+4 {
		b.port = int(binary.BigEndian.Uint16(p[hl+2:]))
	}
	switch proto {
	case unix.IPPROTO_TCP:
		b.reason = "bypassed the proxy: a direct TCP connection"
	case unix.IPPROTO_UDP:
		b.reason = "bypassed the proxy: UDP"
		if name := dnsQuestion(p[min(hl+8, len(p)):]); b.port == 53 && name != "" {
			b.reason = "bypassed the proxy: a DNS query for " + name
		}
	case unix.IPPROTO_ICMP:
		b.reason = "bypassed the proxy: ICMP"
	default:
		b.reason = "bypassed the proxy: IP protocol " + strconv.Itoa(int(proto))
	}
	return b, true
}

// dnsQuestion is the first name a DNS message asks for, "" if it is not
// one.
func dnsQuestion(m []byte) string {
	if len(m) < 12 || m[2]&0x80 != 0 || binary.BigEndian.Uint16(m[4:]) == 0 {
		return ""
	}
	var labels []string
	for i := 12; i < len(m); {
		n := int(m[i])
		if n == 0 {
			return strings.Join(labels, ".")
		}
		if n > 63 || i+1+n > len(m) {
			return ""
		}
		labels = append(labels, strings.Map(printable, string(m[i+1:i+1+n])))
		i += 1 + n
	}
	return ""
}

// printable keeps a name's letters, digits and punctuation, and nothing
// that could garble the ledger or the body.
func printable(r rune) rune {
	if r > ' ' && r < 0x7f {
		return r
	}
	return '?'
}
