//go:build e2e

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/client"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// goProxy serves one module version over the GOPROXY protocol
// (https://go.dev/ref/mod#goproxy-protocol) and records the paths asked.
type goProxy struct {
	mod   module.Version
	gomod []byte
	zip   []byte
	requestLog
}

// newGoProxy zips the module in dir as path@version and returns the
// proxy and the module's two go.sum lines.
func newGoProxy(t *testing.T, dir, path, version string) (*goProxy, string) {
	t.Helper()
	p := &goProxy{mod: module.Version{Path: path, Version: version}}
	var buf bytes.Buffer
	if err := modzip.CreateFromDir(&buf, p.mod, dir); err != nil {
		t.Fatal(err)
	}
	p.zip = buf.Bytes()
	var err error
	if p.gomod, err = os.ReadFile(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	zipFile := filepath.Join(t.TempDir(), "m.zip")
	if err := os.WriteFile(zipFile, p.zip, 0o644); err != nil {
		t.Fatal(err)
	}
	zipHash, err := dirhash.HashZip(zipFile, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(p.gomod)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", path, version, zipHash, path, version, modHash)
	return p, sum
}

func (p *goProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.record(r.URL.Path)
	base := "/" + p.mod.Path + "/@v/"
	switch r.URL.Path {
	case base + "list":
		fmt.Fprintln(w, p.mod.Version)
	case base + p.mod.Version + ".info":
		fmt.Fprintf(w, `{"Version":%q,"Time":"2024-01-01T00:00:00Z"}`, p.mod.Version)
	case base + p.mod.Version + ".mod":
		w.Write(p.gomod)
	case base + p.mod.Version + ".zip":
		w.Write(p.zip)
	default:
		http.NotFound(w, r)
	}
}

// TestDependencySetupAfterTheChange (issue 24): the fix needs a Go module
// that only a module proxy on a fake host of the internet serves (on the
// repository's network.allow, so setup's egress proxy lets it through). The model cannot
// fetch it (the agent phase has no network), asks for dependency setup
// with fetch_dependencies, builds against the module, and finishes; the
// application runs the trusted setup again on the committed tree, and the
// final checks, offline, pass with the module from the job's own cache,
// which goes with the job: the repository's shared cache never sees it.
// The setup is the repository's configured one, which may run the
// change's code, so the run is unverified (issue 40).
func TestDependencySetupAfterTheChange(t *testing.T) {
	sandboxtest.EndToEnd(t)
	data := filepath.Join("testdata", "go-deps")
	proxy, sum := newGoProxy(t, filepath.Join(data, "module"), "example.com/textcase", "v1.0.0")
	host := sandboxtest.FakeHost(t, proxy)
	url := "http://" + host

	files := map[string]string{
		// The repository's own setup names its proxy, as a private one
		// would be named.
		".github/agent.yml": "setup:\n  - go env -w GOPROXY=" + url + " GOSUMDB=off && go mod download\n" +
			// example.com, the module's host: the module proxy would
			// fetch it from there (TestGoModuleOnUnallowedHostIsNotFetched).
			"network:\n  allow: ['" + host + "', 'example.com']\n" +
			"verify:\n  - name: test\n    run: go test ./...\n",
	}
	for _, name := range []string{"go.mod", "names.go", "names_test.go"} {
		b, err := os.ReadFile(filepath.Join(data, "repo", name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	repo := gitRepo(t, files)
	cache := fmt.Sprintf("patchwright-test-deps-%d", os.Getpid())
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cli.VolumeRemove(context.Background(), cache+"-job-test-"+t.Name(), true)
		cli.VolumeRemove(context.Background(), cache, true)
		cli.Close()
	})

	names := "package names\n\nimport \"example.com/textcase\"\n\n// Title formats a name for a badge.\nfunc Title(name string) string {\n\treturn textcase.Title(name)\n}\n"
	res, out, _ := scenario{
		repo:        repo,
		issue:       agent.Issue{Title: "Badges show names in lower case", Body: "Use our example.com/textcase module's Title for badge names."},
		wire:        provider.NameOpenAI,
		cacheVolume: cache,
		turns: []pt.Turn{
			call("read_file", `{"path":"go.mod"}`),
			call("edit", `{"edits":[{"path":"go.mod","old_text":"go 1.22\n","new_text":"go 1.22\n\nrequire example.com/textcase v1.0.0\n"}]}`),
			call("write_file", `{"path":"go.sum","content":`+jsonString(sum)+`}`),
			call("read_file", `{"path":"names.go"}`),
			call("write_file", `{"path":"names.go","content":`+jsonString(names)+`}`),
			// The model's own try: no network in its sandbox.
			call("run", `{"command":"GOFLAGS=-mod=mod GOPROXY=`+url+` go mod download"}`),
			call("fetch_dependencies", `{}`),
			call("run", `{"command":"go test ./..."}`),
			call("finish", `{"summary":"Title uses example.com/textcase."}`),
		},
	}.run(t)
	// The checks passed with the module, but the configured setup that
	// fetched it ran on the changed tree, where it could run the change's
	// code (issue 40).
	wantUntrustedSetup(t, res, out, "a configured setup command runs")

	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var runs []string
	var setups []ledger.DependencyEvent
	for _, rec := range log.Records {
		switch rec.Type {
		case ledger.TypeToolCall:
			var c ledger.ToolCall
			rec.Decode(&c)
			if c.Tool == "run" || c.Tool == "fetch_dependencies" {
				runs = append(runs, c.Tool+": "+c.Result)
			}
		case ledger.TypeDependencies:
			var d ledger.DependencyEvent
			if err := rec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			setups = append(setups, d)
		}
	}
	if len(runs) != 3 {
		t.Fatalf("tool results %q", runs)
	}
	if strings.Contains(runs[0], "exit code 0") {
		t.Errorf("the model fetched the module itself: %s", runs[0])
	}
	for _, want := range []string{"exit code 0", "fetched: Go module example.com/textcase v1.0.0 (new)", "from: GOPROXY=" + url} {
		if !strings.Contains(runs[1], want) {
			t.Errorf("fetch_dependencies result lacks %q:\n%s", want, runs[1])
		}
	}
	if !strings.Contains(runs[2], "exit code 0") {
		t.Errorf("the agent's sandbox cannot build against the fetched module:\n%s", runs[2])
	}
	if len(setups) != 2 || !setups[0].ByModel || setups[1].ByModel || setups[1].Failed() || !slices.Equal(setups[1].Manifests, []string{"go.mod", "go.sum"}) {
		t.Fatalf("dependency setups %+v, want the model's, then a passing one after the change for go.mod and go.sum", setups)
	}
	if !slices.ContainsFunc(proxy.paths(), func(p string) bool { return strings.HasSuffix(p, ".zip") }) {
		t.Errorf("the proxy never served the module's zip: %q", proxy.paths())
	}

	body := readBody(t, out)
	for _, want := range []string{"**Dependencies**", "the lock file changed", "Go module `example.com/textcase` `v1.0.0` (new)", "`GOPROXY=" + url + "`", "never a command the model wrote"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}

	// The job's own cache went with the job, and the shared one never
	// held the module.
	if _, err := cli.VolumeInspect(context.Background(), cache+"-job-test-"+t.Name()); err == nil {
		t.Errorf("the job's cache volume outlived the job")
	}
	engine := sandboxtest.NewDocker(t, docker.Options{})
	sb := sandboxtest.New(t, engine, sandbox.Spec{CacheVolume: cache, CacheReadOnly: true})
	ls, err := sb.Exec(context.Background(), sandbox.Command{Script: `ls "$GOMODCACHE/cache/download/example.com" 2>&1 || true`})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ls.Stdout.Head), "textcase") {
		t.Errorf("the shared cache holds the module the change fetched: %s", ls.Stdout.Head)
	}
}

func jsonString(s string) string { return `"` + jsonText(s) + `"` }
