package pipeline

import (
	"slices"
	"testing"

	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/verify/findings"
)

func TestGoHeld(t *testing.T) {
	allow := egress.Allowlist{"proxy.golang.org", "sum.golang.org", "*.corp.example", "github.com", "git.example:8443"}
	def := goEnv{Proxy: "https://proxy.golang.org,direct"}
	cases := map[string]struct {
		mod       string
		env       goEnv
		anyOrigin bool
		want      string // the route of a held module; "" when fetched
	}{
		"allowed host through the proxy":        {mod: "github.com/a/b", env: def},
		"allowed subdomain":                     {mod: "git.corp.example/x", env: def},
		"host not allowed through the proxy":    {mod: "evil.example.com/x", env: def, want: routeProxy},
		"host only allowed on another port":     {mod: "git.example/x", env: def, want: routeProxy},
		"the proxy's own host names no module":  {mod: "proxy.golang.org/evil", env: def},
		"upper case host is the same host":      {mod: "GitHub.com/a/b", env: def},
		"operator allows any origin":            {mod: "evil.example.com/x", env: def, anyOrigin: true},
		"private module goes direct":            {mod: "evil.example.com/x", env: goEnv{Proxy: def.Proxy, NoProxy: "evil.example.com"}, anyOrigin: true, want: routeDirect},
		"GONOPROXY glob":                        {mod: "evil.example.com/x/y", env: goEnv{Proxy: def.Proxy, NoProxy: "*.example.com"}, want: routeDirect},
		"GONOPROXY not matching":                {mod: "evil.example.com/x", env: goEnv{Proxy: def.Proxy, NoProxy: "other.example"}, anyOrigin: true},
		"direct first":                          {mod: "evil.example.com/x", env: goEnv{Proxy: "direct"}, anyOrigin: true, want: routeDirect},
		"direct first, allowed host":            {mod: "github.com/a/b", env: goEnv{Proxy: "direct"}},
		"off fetches nothing":                   {mod: "evil.example.com/x", env: goEnv{Proxy: "off"}},
		"a private proxy, then direct":          {mod: "evil.example.com/x", env: goEnv{Proxy: "https://athens.corp.example|direct"}, want: routeProxy},
		"a private proxy with any origin":       {mod: "evil.example.com/x", env: goEnv{Proxy: "https://athens.corp.example,off"}, anyOrigin: true},
		"an empty GOPROXY is the default proxy": {mod: "evil.example.com/x", env: goEnv{}, want: routeProxy},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := goHeld(goHoldInput{Modules: []string{c.mod}, Env: c.env, Allow: allow, AnyOrigin: c.anyOrigin})
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("%s held: %+v", c.mod, got)
			case c.want != "" && (len(got) != 1 || got[0] != report.UnfetchedModule{Module: c.mod, Host: moduleHost(c.mod), Route: c.want}):
				t.Errorf("%s: got %+v, want held by route %s", c.mod, got, c.want)
			}
		})
	}
}

func TestNewGoModules(t *testing.T) {
	baseMod := "module example.com/app\n\ngo 1.22\n\nrequire github.com/old/dep v1.0.0\n"
	baseSum := "github.com/old/dep v1.0.0 h1:x=\ngithub.com/old/dep v1.0.0/go.mod h1:y=\n"
	files := []findings.File{
		{Path: "go.mod", Base: []byte(baseMod), New: []byte(baseMod +
			"require (\n\tgithub.com/old/dep v1.1.0\n\tevil.example.com/new v0.1.0\n)\n" +
			"replace github.com/old/dep => other.example/fork v1.0.0\n" +
			"replace example.com/local => ./local\n")},
		{Path: "tools/go.sum", Base: []byte(baseSum), New: []byte(baseSum +
			"sum.example/indirect v1.0.0/go.mod h1:z=\nnot a sum line\n..bad/path v1.0.0 h1:q=\n")},
		// A new module of the repository: its go.mod is added.
		{Path: "sub/go.mod", New: []byte("module example.com/app/sub\n\nrequire added.example/m v1.0.0\n")},
		// Unparsable: go downloads nothing for it.
		{Path: "broken/go.mod", New: []byte("require (\n")},
		// Deleted, and not a Go file: nothing.
		{Path: "gone/go.mod", Base: []byte(baseMod)},
		{Path: "package.json", New: []byte(`{"dependencies":{"evil.example.com/x":"1"}}`)},
	}
	got := newGoModules(files)
	want := []string{"added.example/m", "evil.example.com/new", "other.example/fork", "sum.example/indirect"}
	if !slices.Equal(got, want) {
		t.Errorf("newGoModules = %q, want %q", got, want)
	}
}
