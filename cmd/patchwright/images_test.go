package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/webhook/runpage"
)

var updateImages = flag.Bool("update-images", false, "photograph the example's run again into docs/images with headless Chromium")

// The pictures of what a user sees, made by TestDocImages from a real run
// of the keyless example, relative to this package's directory.
const imagesDir = "../../docs/images"

var docImages = []string{"pull-request-body.png", "status-comment.png", "run-page.png"}

// TestDocImagesExist: the pictures the docs show are there, and are PNGs.
// TestDocImages makes them again with -update-images; CI only checks.
func TestDocImagesExist(t *testing.T) {
	for _, name := range docImages {
		b, err := os.ReadFile(filepath.Join(imagesDir, name))
		if err != nil {
			t.Errorf("%v: make it with go test -tags e2e ./cmd/patchwright -run TestDocImages -update-images", err)
			continue
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s is not a PNG", name)
		}
	}
}

// TestDocImages runs the keyless example (as TestRunReplaysExample does)
// and photographs, in headless Chromium, its pull-request body and the
// status comment as GitHub would render their Markdown, and its run page.
func TestDocImages(t *testing.T) {
	if !*updateImages {
		t.Skip("photographs the example's run only with -update-images")
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
		}
	}
	if browser == "" {
		t.Fatal("needs a headless Chromium: apt-get install chromium")
	}
	o := runExample(t, exampleRepo(t), "replay:"+filepath.Join(examplesDir, exampleTranscript))
	if o.code != 0 || o.res.Outcome != "verified" {
		t.Fatalf("exit %d, outcome %s (%s)\nstderr: %s", o.code, o.res.Outcome, o.res.Reason, o.stderr)
	}
	status, err := report.StatusComment(report.Status{Issue: 1, Phase: report.PhaseDone, BaseBranch: "main", BaseCommit: o.res.BaseCommit,
		Image: "patchwright-example:go", Baseline: baselineChecks(t, o.out), Step: o.res.Steps, MaxSteps: 40,
		PullRequestURL: "https://github.com/example/wordcount/pull/2", Outcome: o.res.Outcome, Reason: o.res.Reason})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pages := map[string]string{
		"pull-request-body.png": markdownPage(t, dir, "body.html", o.body),
		"status-comment.png":    markdownPage(t, dir, "status.html", status),
		"run-page.png":          filepath.Join(o.out, runpage.FileName),
	}
	// Heights fit each picture, so none is mostly blank.
	heights := map[string]int{"pull-request-body.png": 1100, "status-comment.png": 260, "run-page.png": 1300}
	for _, name := range docImages {
		shoot(t, browser, pages[name], filepath.Join(imagesDir, name), heights[name])
	}
}

// baselineChecks are the baseline's check results from the run's ledger.
func baselineChecks(t *testing.T, out string) []verify.CheckResult {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := ledger.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var checks []verify.CheckResult
	for _, r := range log.Records {
		var c verify.CheckResult
		if r.Type == ledger.TypeCheck && r.Decode(&c) == nil && c.Phase == verify.Baseline {
			checks = append(checks, c)
		}
	}
	return checks
}

// markdownPage writes md rendered as GitHub renders a comment (GFM, its
// HTML kept: <details> folds) into dir/name and returns the file.
func markdownPage(t *testing.T, dir, name, md string) string {
	t.Helper()
	var body bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gm.Convert([]byte(md), &body); err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><meta charset="utf-8"><style>
body{font:14px/1.5 -apple-system,"Segoe UI",system-ui,sans-serif;color:#1f2328;max-width:820px;margin:16px auto;padding:16px 20px;border:1px solid #d0d7de;border-radius:6px}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:6px 13px}th{background:#f6f8fa}
code{background:#eff1f3;padding:.2em .4em;border-radius:6px;font-size:85%}pre{background:#f6f8fa;padding:16px;overflow:auto}
pre code{background:none;padding:0}h2,h3{border-bottom:1px solid #d8dee4;padding-bottom:.3em}a{color:#0969da}
</style></head><body>` + body.String() + `</body></html>`
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// shoot saves a screenshot of the local page file as png, in a window
// 900 pixels wide and height high, so the pictures stay small. Emoji need
// a colour emoji font (Debian: fonts-noto-color-emoji).
func shoot(t *testing.T, browser, file, png string, height int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(png)
	if err != nil {
		t.Fatal(err)
	}
	const width = 900
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(), "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height),
		"--screenshot="+abs, "file://"+file).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium --screenshot %s: %v\n%s", file, err, out)
	}
}
