package docker

import (
	"strings"
	"testing"

	"github.com/docker/docker/api/types/network"
)

func TestFirstLine(t *testing.T) {
	tests := map[string]struct {
		writes []string
		line   string
		rest   string
	}{
		"one write":        {[]string{"3\nout"}, "3", "out"},
		"empty line":       {[]string{"\nerr\n"}, "", "err\n"},
		"split line":       {[]string{"1", "2", "\n", "a", "b"}, "12", "ab"},
		"newline later":    {[]string{"7\nx\ny\n"}, "7", "x\ny\n"},
		"nothing after":    {[]string{"5\n"}, "5", ""},
		"never a newline":  {[]string{"5"}, "5", ""},
		"too long is kept": {[]string{strings.Repeat("x", 70) + "\nrest"}, "", strings.Repeat("x", 70) + "\nrest"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCapture(1000)
			f := &firstLine{w: c}
			for _, w := range tt.writes {
				if n, err := f.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			o := c.output()
			if f.text() != tt.line || string(o.Head)+string(o.Tail) != tt.rest || o.Total != int64(len(tt.rest)) {
				t.Fatalf("line %q, rest %q (total %d); want %q, %q", f.text(), o.Head, o.Total, tt.line, tt.rest)
			}
		})
	}
}

func TestExitRecordParse(t *testing.T) {
	tests := map[string]struct {
		writes []string
		rest   string
		status int // -1: no record
	}{
		"record alone":          {[]string{"\n0\n"}, "", 0},
		"after a line":          {[]string{"err\n", "\n3\n"}, "err\n", 3},
		"after no newline":      {[]string{"err", "\n255\n"}, "err", 255},
		"one write":             {[]string{"long stderr\n\n17\n"}, "long stderr\n", 17},
		"byte by byte":          {[]string{"a", "b", "\n", "4", "2", "\n"}, "ab", 42},
		"over 255":              {[]string{"x\n256\n"}, "x\n256\n", -1},
		"four digits":           {[]string{"\n1000\n"}, "\n1000\n", -1},
		"sign":                  {[]string{"\n+1\n"}, "\n+1\n", -1},
		"no final newline":      {[]string{"\n0"}, "\n0", -1},
		"no digits":             {[]string{"a\n\n"}, "a\n\n", -1},
		"nothing":               {nil, "", -1},
		"text after a record":   {[]string{"\n0\nmore"}, "\n0\nmore", -1},
		"shorter than a record": {[]string{"ab"}, "ab", -1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := newCapture(1000)
			r := &exitRecord{w: c}
			for _, w := range tt.writes {
				if n, err := r.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			status, ok := r.end()
			o := c.output()
			if ok != (tt.status >= 0) || (ok && status != tt.status) || string(o.Head)+string(o.Tail) != tt.rest {
				t.Fatalf("end() = %d, %v with rest %q; want %d, rest %q", status, ok, o.Head, tt.status, tt.rest)
			}
		})
	}
}

func TestCheckSetupNetwork(t *testing.T) {
	good := func() network.Inspect {
		return network.Inspect{Driver: "bridge", Options: map[string]string{optBridgeName: SetupBridge, optICC: "false", optMasquerade: "true"}}
	}
	if err := checkSetupNetwork(good()); err != nil {
		t.Fatalf("the network Create makes is refused: %v", err)
	}
	tests := map[string]struct {
		change func(*network.Inspect)
		want   string
	}{
		"overlay":        {func(n *network.Inspect) { n.Driver = "overlay" }, "driver"},
		"other bridge":   {func(n *network.Inspect) { n.Options[optBridgeName] = "br-0123" }, "bridge interface"},
		"no bridge name": {func(n *network.Inspect) { delete(n.Options, optBridgeName) }, "bridge interface"},
		"icc on":         {func(n *network.Inspect) { n.Options[optICC] = "true" }, "reach each other"},
		"icc default":    {func(n *network.Inspect) { delete(n.Options, optICC) }, "reach each other"},
		"ipv6":           {func(n *network.Inspect) { n.EnableIPv6 = true }, "IPv6"},
		"internal":       {func(n *network.Inspect) { n.Internal = true }, "internal"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			n := good()
			tt.change(&n)
			if err := checkSetupNetwork(n); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("checkSetupNetwork = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestProxyEnvJava: the JVM, which reads no HTTP_PROXY, gets the proxy
// as system properties, and the services as the hosts it reaches
// directly.
func TestProxyEnvJava(t *testing.T) {
	tests := map[string]struct {
		services []string
		want     string
	}{
		"no services": {nil, "-Dhttp.proxyHost=172.30.0.1 -Dhttp.proxyPort=41234 -Dhttps.proxyHost=172.30.0.1 -Dhttps.proxyPort=41234"},
		"services":    {[]string{"db", "cache"}, "-Dhttp.proxyHost=172.30.0.1 -Dhttp.proxyPort=41234 -Dhttps.proxyHost=172.30.0.1 -Dhttps.proxyPort=41234 -Dhttp.nonProxyHosts=db|cache"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, kv := range proxyEnv("http://172.30.0.1:41234", tc.services) {
				if v, ok := strings.CutPrefix(kv, "JAVA_TOOL_OPTIONS="); ok {
					got = append(got, v)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("JAVA_TOOL_OPTIONS %q, want %q", got, tc.want)
			}
		})
	}
}
