package runsui

import (
	"context"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/runstore"
)

// TestChromiumShowsTheDashboard loads the dashboard with merged, closed
// and open pull requests in a real browser, signed in with the operator
// password, and checks the figures and the runs a person sees, the
// hostile title as text.
func TestChromiumShowsTheDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
		}
	}
	if browser == "" {
		t.Skip("needs a headless Chromium: apt-get install chromium")
	}
	runs, recs := sample()
	runs = append(runs, runstore.Summary{ID: "r5", Installation: 1, Repo: "acme/widgets", Issue: 5,
		Title: `<img src=x onerror="document.title='pwned'">`, StartedAt: now.Add(-30 * time.Minute)})
	srv := fixture(t, runs, recs)
	u, _ := url.Parse(srv.URL + "/runs")
	u.User = url.UserPassword("operator", password)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", u.String()).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	for _, want := range []string{`id="merge-rate">50% of 2 decided`, `id="cost-per-merged">$0.50 over 1`, `id="open">1<`,
		"#10 merged", "#11 closed", "#12 open", "/runs/r1?sig=x", "&lt;img src=x"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the browser shows no %q", want)
		}
	}
	if strings.Contains(dom, "pwned") && strings.Contains(dom, "<title>pwned") {
		t.Errorf("the hostile title ran")
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
}
