package runpage

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/runstore"
)

// chromium returns Debian's headless browser, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("needs a headless Chromium: apt-get install chromium")
	return ""
}

// dumpDOM loads url in headless Chromium and returns the DOM after the
// page's load, as a person's browser would have built it (scripts that
// could run would have run by then).
func dumpDOM(t *testing.T, browser, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	return string(out)
}

var scriptElement = regexp.MustCompile(`(?i)<script[\s>]`)

// TestChromiumShowsARecordedRunInert loads a run page built from a
// recorded, hostile ledger in a real browser and checks what a person
// sees: the run's turns and commands, the hostile text as text, no script
// run, and nothing at all on an unsigned link.
func TestChromiumShowsARecordedRunInert(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	f := newFixture(t)
	f.now = time.Now() // the browser's requests are checked against the real clock's links
	// No alert(): a dialog would stall the headless browser instead of
	// failing the test.
	attack := "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">" +
		"[click](javascript:void(0))\x1b[31mred\x1b[0m\u202etxt.exe"
	f.put(t, runstore.Record{ID: "evil", Repo: "acme/app", Issue: 7, Ledger: writeLedger(t,
		&ledger.RunStart{Model: "openai:m", Prompt: "Issue #7: " + attack},
		&ledger.ModelTurn{Step: 1, Model: "openai:m", InputTokens: 10, OutputTokens: 5, Text: attack},
		&ledger.Command{Step: 1, CallID: "c1", Tool: "run", CommandRecord: ledger.CommandRecord{Command: "make test", ExitCode: 2, Duration: time.Second, Output: attack}},
	), Body: []byte(attack)})

	dom := dumpDOM(t, browser, f.signer.Link(f.srv.URL+"/runs", "evil"))
	for _, want := range []string{"acme/app#7, run evil", "Model turn 1", "$ make test", "exit 2, 1s", "&lt;script&gt;document.title='pwned'&lt;/script&gt;"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page a person sees lacks %q", want)
		}
	}
	if strings.Contains(dom, "<title>pwned") {
		t.Error("a script from the ledger ran")
	}
	if scriptElement.MatchString(dom) || strings.Contains(dom, "<img") {
		t.Errorf("the DOM holds an element from the ledger:\n%s", dom)
	}

	if dom := dumpDOM(t, browser, f.srv.URL+"/runs/evil"); strings.Contains(dom, "Model turn") || !strings.Contains(dom, "not found") {
		t.Errorf("an unsigned link showed:\n%s", dom)
	}
}

// TestChromiumShowsEveryEvent opens the page of a run with every event
// type, hostile text in each, as a local file (patchwright run's
// run.html) in a real browser: the tables and the diff are built, the
// hostile text stays text, and no script ran.
func TestChromiumShowsEveryEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	attack := "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">[click](javascript:void(0))\x1b[31mred\u202e"
	page, err := Page(runstore.Record{ID: "local-all", Done: true, Ledger: writeLedger(t, everyEvent(attack)...),
		Result: []byte(`{"outcome":"verified","reason":"the checks passed"}`), Body: []byte(attack)})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := dumpDOM(t, browser, "file://"+file)
	for _, want := range []string{"<title>Run local-all</title>", "<td>vet</td><td>baseline</td><td>go vet ./...</td><td>passed</td>",
		`<td>test_skipped</td>`, `<div class="del">-n := 0</div>`, "Connection refused: evil.example:443",
		"&lt;script&gt;document.title='pwned'&lt;/script&gt;"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page a person sees lacks %q", want)
		}
	}
	if strings.Contains(dom, "<title>pwned") || scriptElement.MatchString(dom) || strings.Contains(dom, "<img") || strings.Contains(dom, "<a ") {
		t.Errorf("the DOM holds an element from the ledger, or a script ran:\n%s", dom)
	}
}
