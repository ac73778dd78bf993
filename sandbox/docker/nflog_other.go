//go:build !linux

package docker

import (
	"context"
	"errors"
	"net"
)

// The firewall log and the sandbox routes are Linux's (nflog_linux.go,
// netns_linux.go): elsewhere the egress network cannot be set up, as its
// iptables rules cannot.

type bypass struct {
	prefix, ip, reason string
	port               int
}

type nflog struct{ group uint16 }

var errNotLinux = errors.New("the egress firewall needs Linux")

func openNFLOG(func(bypass)) (*nflog, error) { return nil, errNotLinux }
func (*nflog) close() error                  { return nil }
func (*nflog) flush(context.Context) error   { return nil }
func addDefaultRoute(string, net.IP) error   { return errNotLinux }
