//go:build e2e

package pipeline

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// npmRegistry serves one package version over the npm registry protocol:
// the package document at /NAME (its versions, each with dist.tarball,
// dist.integrity and dist.shasum) and the tarball it names. It records
// the paths asked.
type npmRegistry struct {
	name, version string
	tgz           []byte
	requestLog
}

// newNPMRegistry packs the package in dir (package.json and its files,
// under package/ as npm packs them) into a gzipped tarball whose bytes
// depend only on the files: fixed times, owners and modes.
func newNPMRegistry(t *testing.T, dir string) *npmRegistry {
	t.Helper()
	var meta struct{ Name, Version string }
	pj, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(pj, &meta); err != nil || meta.Name == "" || meta.Version == "" {
		t.Fatalf("package.json of %s: %v %+v", dir, err, meta)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	mtime := time.Date(1985, 10, 26, 8, 15, 0, 0, time.UTC) // npm's own fixed date
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		hdr := &tar.Header{Name: "package/" + e.Name(), Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return &npmRegistry{name: meta.Name, version: meta.Version, tgz: buf.Bytes()}
}

// integrity is the tarball's Subresource Integrity string, as lock files
// and dist.integrity hold it.
func (g *npmRegistry) integrity() string {
	sum := sha512.Sum512(g.tgz)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// tarballURL is where the registry at base ("http://host:port") serves
// the tarball.
func (g *npmRegistry) tarballURL(base string) string {
	return fmt.Sprintf("%s/%s/-/%s-%s.tgz", base, g.name, g.name, g.version)
}

func (g *npmRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.record(r.URL.Path)
	base := "http://" + r.Host
	switch r.URL.Path {
	case "/" + g.name:
		sha := sha1.Sum(g.tgz)
		doc := map[string]any{
			"name":      g.name,
			"dist-tags": map[string]string{"latest": g.version},
			"versions": map[string]any{g.version: map[string]any{
				"name": g.name, "version": g.version,
				"dist": map[string]string{"tarball": g.tarballURL(base), "integrity": g.integrity(), "shasum": hex.EncodeToString(sha[:])},
			}},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	case g.tarballURL(""):
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(g.tgz)
	default:
		http.NotFound(w, r)
	}
}

// jsDepsChange is the change of testdata/repos/js-deps that needs the
// registry's package: package.json and package-lock.json name it (the
// lock file with the tarball's address and integrity, as `npm install`
// would write it), and badge.js requires it.
func jsDepsChange(t *testing.T, reg *npmRegistry, host string) (pkg, lock, code string) {
	t.Helper()
	pkg = `{
  "name": "badges",
  "version": "1.0.0",
  "private": true,
  "main": "src/badge.js",
  "scripts": {
    "test": "node --test"
  },
  "dependencies": {
    "` + reg.name + `": "^` + reg.version + `"
  }
}
`
	lockDoc := map[string]any{
		"name": "badges", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
		"packages": map[string]any{
			"": map[string]any{"name": "badges", "version": "1.0.0", "dependencies": map[string]string{reg.name: "^" + reg.version}},
			"node_modules/" + reg.name: map[string]any{
				"version": reg.version, "resolved": reg.tarballURL("http://" + host), "integrity": reg.integrity(), "license": "MIT",
			},
		},
	}
	b, err := json.MarshalIndent(lockDoc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	code = "'use strict';\n\nconst { title } = require('" + reg.name + "');\n\n// badge is the text of a name badge.\nfunction badge(name) {\n  return 'Hello, ' + title(name);\n}\n\nmodule.exports = { badge };\n"
	return pkg, string(b) + "\n", code
}

// jsDepsRepo is testdata/repos/js-deps with .npmrc naming the registry at
// host (as a private registry would be named) and agent.yml's network
// section.
func jsDepsRepo(t *testing.T, host, network string) string {
	t.Helper()
	return gitRepo(t, jsDepsFiles(t, host, network))
}

// jsDepsFiles are jsDepsRepo's files.
func jsDepsFiles(t *testing.T, host, network string) map[string]string {
	t.Helper()
	files := fixtureFiles(t, "js-deps")
	files[".npmrc"] = "registry=http://" + host + "/\n"
	files[".github/agent.yml"] = network + "verify:\n  - name: test\n    run: npm test\n"
	return files
}

// jsDepsTurns make the change and finish; between them, extra calls.
func jsDepsTurns(pkg, lock, code string, extra ...pt.Turn) []pt.Turn {
	turns := []pt.Turn{
		call("read_file", `{"path":"package.json"}`),
		call("write_file", `{"path":"package.json","content":`+jsonString(pkg)+`}`),
		call("read_file", `{"path":"package-lock.json"}`),
		call("write_file", `{"path":"package-lock.json","content":`+jsonString(lock)+`}`),
		call("read_file", `{"path":"src/badge.js"}`),
		call("write_file", `{"path":"src/badge.js","content":`+jsonString(code)+`}`),
	}
	turns = append(turns, extra...)
	return append(turns, call("finish", `{"summary":"Badges use textcase's title."}`))
}

var jsDepsIssue = agent.Issue{Title: "Badges show names in lower case", Body: "Use the textcase package from our registry to title-case badge names."}

// TestNPMDependencyAfterTheChange (issue 24): a Node change that needs a
// package only a registry on a fake host of the internet serves (named
// by the repository's .npmrc and its network.allow). The model adds it to
// package.json and package-lock.json and requires it; it never fetches
// anything. Dependency setup after the change runs `npm ci` on a copy of
// the committed tree through the egress proxy, the node_modules it made
// reaches the final checks, `npm test` passes there, and the body's
// Dependencies paragraph names the package.
func TestNPMDependencyAfterTheChange(t *testing.T) {
	sandboxtest.EndToEnd(t)
	reg := newNPMRegistry(t, filepath.Join(sandboxtest.ReposDir(), "js-deps", "package"))
	host := sandboxtest.FakeHost(t, reg)
	pkg, lock, code := jsDepsChange(t, reg, host)
	res, out, _ := scenario{
		repo:        jsDepsRepo(t, host, "network:\n  allow: ['"+host+"']\n"),
		issue:       jsDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       jsDepsTurns(pkg, lock, code),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; registry asked %q; ledger:\n%s", res.Outcome, res.Reason, reg.paths(), readLedger(t, out))
	}
	if !slices.Contains(reg.paths(), reg.tarballURL("")) {
		t.Errorf("the registry never served the tarball: %q", reg.paths())
	}
	setups := dependencyEvents(t, out)
	if len(setups) != 1 || setups[0].Failed() || !slices.Equal(setups[0].Manifests, []string{"package-lock.json", "package.json"}) ||
		len(setups[0].Commands) != 1 || !strings.HasPrefix(setups[0].Commands[0].Command, "npm ci ") {
		t.Fatalf("dependency setups %+v, want one passing npm ci for package.json and package-lock.json", setups)
	}
	body := readBody(t, out)
	for _, want := range []string{"**Dependencies**", "the lock file changed", "npm package `textcase` `^1.0.0` (new)", "`npm registry http://" + host + "/`", "`npm ci "} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	// node_modules came from setup, never from the commit.
	if strings.Contains(body, "node_modules") {
		t.Errorf("the body names node_modules, as if the change held it:\n%s", body)
	}
}

// TestNPMDependencyRefused: the same change, but network.allow does not
// name the registry. npm ci is refused by the egress proxy, the final
// checks run without the package and fail, and "Not verified" names the
// refused connection and the command; the ledger has the refusal.
func TestNPMDependencyRefused(t *testing.T) {
	sandboxtest.EndToEnd(t)
	reg := newNPMRegistry(t, filepath.Join(sandboxtest.ReposDir(), "js-deps", "package"))
	host := sandboxtest.FakeHost(t, reg)
	pkg, lock, code := jsDepsChange(t, reg, host)
	res, out, _ := scenario{
		repo:        jsDepsRepo(t, host, ""),
		issue:       jsDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       jsDepsTurns(pkg, lock, code),
	}.run(t)
	if res.Outcome == verify.Verified {
		t.Fatalf("outcome verified without the package's registry on the allowlist")
	}
	if len(reg.paths()) != 0 {
		t.Errorf("the registry was reached: %q", reg.paths())
	}
	wantSetupRefused(t, out, host, "npm ci ")
}

// testCacheVolume is a cache volume of the test's own, removed after it:
// what these tests fetch must not reach the shared test cache.
func testCacheVolume(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("patchwright-test-%s-%d", strings.ToLower(t.Name()), os.Getpid())
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, v := range []string{name, name + "-job-test-" + t.Name(), name + "-fetch-test-" + t.Name()} {
			cli.VolumeRemove(context.Background(), v, true)
		}
		cli.Close()
	})
	return name
}

// dependencyEvents are the run's dependency setups from its ledger.
func dependencyEvents(t *testing.T, out string) []ledger.DependencyEvent {
	t.Helper()
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var setups []ledger.DependencyEvent
	for _, rec := range log.Records {
		if rec.Type == ledger.TypeDependencies {
			var d ledger.DependencyEvent
			if err := rec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			setups = append(setups, d)
		}
	}
	return setups
}

// TestNPMFetchDependenciesInstallsIntoTheWorkTree (issue 24): the model's
// own `npm test` cannot find the new package, fetch_dependencies runs npm
// ci on a copy of its tree and puts the node_modules it made (which the
// repository's .gitignore excludes) into the model's tree, and the
// model's `npm test` then passes. node_modules never enters the commit.
func TestNPMFetchDependenciesInstallsIntoTheWorkTree(t *testing.T) {
	sandboxtest.EndToEnd(t)
	reg := newNPMRegistry(t, filepath.Join(sandboxtest.ReposDir(), "js-deps", "package"))
	host := sandboxtest.FakeHost(t, reg)
	pkg, lock, code := jsDepsChange(t, reg, host)
	res, out, _ := scenario{
		repo:        jsDepsRepo(t, host, "network:\n  allow: ['"+host+"']\n"),
		issue:       jsDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns: jsDepsTurns(pkg, lock, code,
			call("run", `{"command":"npm test"}`),
			call("fetch_dependencies", `{}`),
			call("run", `{"command":"npm test"}`)),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; ledger:\n%s", res.Outcome, res.Reason, readLedger(t, out))
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, rec := range log.Records {
		var c ledger.ToolCall
		if rec.Type == ledger.TypeToolCall && rec.Decode(&c) == nil && (c.Tool == "run" || c.Tool == "fetch_dependencies") {
			results = append(results, c.Result)
		}
	}
	if len(results) != 3 {
		t.Fatalf("tool results %q", results)
	}
	if !strings.Contains(results[0], "Cannot find module 'textcase'") {
		t.Errorf("the model's first npm test found the package before any fetch:\n%s", results[0])
	}
	if !strings.Contains(results[1], "installed into the work tree: node_modules") {
		t.Errorf("fetch_dependencies did not install node_modules:\n%s", results[1])
	}
	if !strings.Contains(results[2], "exit code 0") || !strings.Contains(results[2], "# pass 2") {
		t.Errorf("the model's npm test after fetch_dependencies did not pass:\n%s", results[2])
	}
	if body := readBody(t, out); strings.Contains(body, "node_modules") {
		t.Errorf("node_modules is in the change:\n%s", body)
	}
}
