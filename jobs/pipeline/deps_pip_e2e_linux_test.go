//go:build e2e

package pipeline

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// pypiIndex serves one pure-Python wheel over PyPI's simple repository
// API (PEP 503, HTML): the project page /simple/NAME/ links the wheel,
// with its sha256, at /files/WHEEL. It records the paths asked.
type pypiIndex struct {
	name, version string
	whl           []byte
	requestLog
}

// newPyPIIndex packs the package directory dir/NAME (its .py files) into
// a wheel NAME-VERSION-py3-none-any.whl whose bytes depend only on the
// files: fixed times and modes, files in name order, the dist-info's
// METADATA, WHEEL and RECORD as a wheel builder writes them.
func newPyPIIndex(t *testing.T, dir, name, version string) *pypiIndex {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(dir, name), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".py") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	info := name + "-" + version + ".dist-info/"
	files[info+"METADATA"] = []byte("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nSummary: Text case helpers (a test fixture)\n")
	files[info+"WHEEL"] = []byte("Wheel-Version: 1.0\nGenerator: patchwright-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var record strings.Builder
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[n]))
	}
	record.WriteString(info + "RECORD,,\n")
	files[info+"RECORD"] = []byte(record.String())
	names = append(names, info+"RECORD")

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	mtime := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, Modified: mtime}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return &pypiIndex{name: name, version: version, whl: buf.Bytes()}
}

func (x *pypiIndex) wheelName() string {
	return x.name + "-" + x.version + "-py3-none-any.whl"
}

func (x *pypiIndex) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x.record(r.URL.Path)
	switch r.URL.Path {
	case "/simple/" + x.name + "/":
		sum := sha256.Sum256(x.whl)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body>\n<a href=\"/files/%s#sha256=%s\">%s</a>\n</body></html>\n",
			x.wheelName(), hex.EncodeToString(sum[:]), x.wheelName())
	case "/files/" + x.wheelName():
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(x.whl)
	default:
		http.NotFound(w, r)
	}
}

// pyIndexLines name the index at host, as a repository with a private
// index names it in its requirements file: pip reads no configuration
// from the repository, and refuses a plain-HTTP index it is not told to
// trust.
func pyIndexLines(host string) string {
	return "--index-url http://" + host + "/simple/\n--trusted-host " + host + "\n"
}

// pyDepsRepo is testdata/repos/py-deps with index appended to
// requirements.txt and, when agentYML is not "", .github/agent.yml
// holding it. The checks are detection's (pytest).
func pyDepsRepo(t *testing.T, index, agentYML string) string {
	t.Helper()
	return gitRepo(t, pyDepsFiles(t, index, agentYML))
}

// pyDepsFiles are pyDepsRepo's files.
func pyDepsFiles(t *testing.T, index, agentYML string) map[string]string {
	t.Helper()
	files := fixtureFiles(t, "py-deps")
	files["requirements.txt"] += index
	if agentYML != "" {
		files[".github/agent.yml"] = agentYML
	}
	return files
}

// pyDepsTurns add the package to requirements.txt (after its index
// lines) and use it; then the extra calls, and finish.
func pyDepsTurns(index string, extra ...pt.Turn) []pt.Turn {
	reqs := "# The badges' runtime dependencies, installed into .venv.\n" + index + "textcase==1.0.0\n"
	code := "\"\"\"Name badges.\"\"\"\n\nfrom textcase import title\n\n\ndef badge(name):\n    \"\"\"The text of a name badge.\"\"\"\n    return \"Hello, \" + title(name)\n"
	turns := []pt.Turn{
		call("read_file", `{"path":"requirements.txt"}`),
		call("write_file", `{"path":"requirements.txt","content":`+jsonString(reqs)+`}`),
		call("read_file", `{"path":"badges/__init__.py"}`),
		call("write_file", `{"path":"badges/__init__.py","content":`+jsonString(code)+`}`),
	}
	turns = append(turns, extra...)
	return append(turns, call("finish", `{"summary":"Badges use textcase's title."}`))
}

var pyDepsIssue = agent.Issue{Title: "Badges show names in lower case", Body: "Use the textcase package from our index to title-case badge names."}

// TestPipDependencyAfterTheChange (issue 24): a Python change that needs
// a package only an index on a fake host of the internet serves (named
// by the repository's requirements.txt and its network.allow). The model
// adds it to requirements.txt and imports it; it never installs
// anything. Dependency setup after the change makes .venv on a copy of
// the committed tree and pip installs the wheel into it through the
// egress proxy; the final checks (detection's `python -m pytest`) run
// with that .venv and pass.
func TestPipDependencyAfterTheChange(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	res, out, _ := scenario{
		repo:        pyDepsRepo(t, pyIndexLines(host), "network:\n  allow: ['"+host+"']\n"),
		issue:       pyDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       pyDepsTurns(pyIndexLines(host)),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; index asked %q; ledger:\n%s", res.Outcome, res.Reason, idx.paths(), readLedger(t, out))
	}
	if !slices.Contains(idx.paths(), "/files/"+idx.wheelName()) {
		t.Errorf("the index never served the wheel: %q", idx.paths())
	}
	setups := dependencyEvents(t, out)
	if len(setups) != 1 || setups[0].Failed() || !slices.Equal(setups[0].Manifests, []string{"requirements.txt"}) ||
		len(setups[0].Commands) != 1 || !strings.Contains(setups[0].Commands[0].Command, ".venv/bin/python -m pip install ") {
		t.Fatalf("dependency setups %+v, want one passing pip install for requirements.txt", setups)
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var final *verify.CheckResult
	for _, rec := range log.Records {
		var c verify.CheckResult
		if rec.Type == ledger.TypeCheck && rec.Decode(&c) == nil && c.Phase == verify.Final && c.Name == "test" {
			final = &c
		}
	}
	if final == nil || !final.Passed || final.Command != "python -m pytest" || !strings.Contains(final.Note, "virtualenv `.venv`") {
		t.Fatalf("final test check %+v, want detection's python -m pytest, passed with .venv", final)
	}
	body := readBody(t, out)
	for _, want := range []string{"**Dependencies**", "Python package `textcase` `==1.0.0` (new)", ".venv/bin/python -m pip install", "`pip downloads from http://" + host + "/`"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	// .venv came from setup, never from the commit: no row of the
	// changed files names it.
	if strings.Contains(body, "| `.venv") {
		t.Errorf("the body lists .venv as changed:\n%s", body)
	}
}

// TestPipDependencyRefused: the same change, but nothing allows the
// index. pip is refused by the egress proxy, the final checks run
// without the package and fail, and "Not verified" names the refused
// connection and the command; the ledger has the refusal.
func TestPipDependencyRefused(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	res, out, _ := scenario{
		repo:        pyDepsRepo(t, pyIndexLines(host), ""),
		issue:       pyDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       pyDepsTurns(pyIndexLines(host)),
	}.run(t)
	if res.Outcome == verify.Verified {
		t.Fatalf("outcome verified without the package's index on the allowlist")
	}
	if len(idx.paths()) != 0 {
		t.Errorf("the index was reached: %q", idx.paths())
	}
	wantSetupRefused(t, out, host, "-m pip install ")
}

// TestPipFetchDependenciesInstallsIntoTheWorkTree (issue 24): the model's
// verify tool cannot import the new package; fetch_dependencies makes
// .venv on a copy of its tree, puts it (the repository ignores it) into
// the model's tree, and the verify tool's `python -m pytest` then runs
// with it and passes. .venv never enters the commit.
func TestPipFetchDependenciesInstallsIntoTheWorkTree(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	res, out, _ := scenario{
		repo:        pyDepsRepo(t, pyIndexLines(host), "network:\n  allow: ['"+host+"']\n"),
		issue:       pyDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns: pyDepsTurns(pyIndexLines(host),
			call("verify", `{}`),
			call("fetch_dependencies", `{}`),
			call("verify", `{}`)),
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
		if rec.Type == ledger.TypeToolCall && rec.Decode(&c) == nil && (c.Tool == "verify" || c.Tool == "fetch_dependencies") {
			results = append(results, c.Result)
		}
	}
	if len(results) != 3 {
		t.Fatalf("tool results %q", results)
	}
	if !strings.Contains(results[0], "No module named 'textcase'") {
		t.Errorf("the model's first verify found the package before any fetch:\n%s", results[0])
	}
	if !strings.Contains(results[1], "installed into the work tree: .venv") {
		t.Errorf("fetch_dependencies did not install .venv:\n%s", results[1])
	}
	if !strings.Contains(results[2], "PASS test: python -m pytest") {
		t.Errorf("the model's verify after fetch_dependencies did not pass:\n%s", results[2])
	}
	if body := readBody(t, out); strings.Contains(body, "| `.venv") {
		t.Errorf(".venv is in the change:\n%s", body)
	}
}

// TestPipConfiguredSetupVirtualenv (issue 24): the repository's own
// setup (default branch) makes .venv and names the index in pip's
// environment, not in requirements.txt. The first setup's .venv reaches
// the baseline; dependency setup after the change runs that setup again
// on the changed tree, and the final checks run with the .venv it
// filled: they pass, unverified, since that setup may run the change's
// code (issue 40).
func TestPipConfiguredSetupVirtualenv(t *testing.T) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	setup := "python3 -m venv --system-site-packages .venv && PIP_INDEX_URL=http://" + host + "/simple/ PIP_TRUSTED_HOST=" + host +
		" .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt"
	res, out, _ := scenario{
		repo:        pyDepsRepo(t, "", "network:\n  allow: ['"+host+"']\nsetup:\n  - "+jsonString(setup)+"\n"),
		issue:       pyDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       pyDepsTurns(""),
	}.run(t)
	// The checks passed with the .venv the configured setup filled on the
	// changed tree, where it may run the change's code (issue 40).
	wantUntrustedSetup(t, res, out, "a configured setup command runs")
	setups := dependencyEvents(t, out)
	if len(setups) != 1 || setups[0].Failed() || !setups[0].Configured || len(setups[0].Commands) != 1 || setups[0].Commands[0].Command != setup {
		t.Fatalf("dependency setups %+v, want the configured setup, passing", setups)
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range log.Records {
		var c verify.CheckResult
		if rec.Type == ledger.TypeCheck && rec.Decode(&c) == nil && !strings.Contains(c.Note, "virtualenv `.venv`") {
			t.Errorf("%s check %s ran without .venv: %+v", c.Phase, c.Name, c)
		}
	}
}
