package runpage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"strings"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/runstore"
)

// foldAt is the length past which text is folded into <details>.
const foldAt = 1500

// unsafeText matches what must not reach a person's screen as is: ANSI
// escape sequences (CSI and OSC), other control characters except tab and
// newline, and Unicode bidirectional controls, which can make text read
// differently from what it is.
var unsafeText = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|\x1b.?|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u0080-\u009f]|[\u202a-\u202e\u2066-\u2069\u200e\u200f]")

// clean makes untrusted text inert beyond what html/template's escaping
// does.
func clean(s string) string { return unsafeText.ReplaceAllString(s, "") }

// block is text shown preformatted, folded when long.
type block struct {
	Text   string
	Folded bool
	Lines  int
}

func newBlock(s string) block {
	s = clean(s)
	return block{Text: s, Folded: len(s) > foldAt, Lines: strings.Count(s, "\n") + 1}
}

// event is one ledger line, or a run of checks or findings, as the page
// shows it.
type event struct {
	// Kind names the event for the page's styles: "prompt", "turn",
	// "tool", "command", "check", "stop", … (events.go); "other" for a
	// type the page does not know.
	Kind     string
	Step     int
	Title    string
	Meta     string
	Body     block
	Args     block
	ExitCode int
	Failed   bool
	// Table, Diff and Details are shown when set, between Args and Body.
	Table   *table
	Diff    []diffLine
	Details []detail
}

// check is one row of the verification table.
type check struct {
	Name, Command   string
	Baseline, Final string
	Duration        string
}

// view is everything the template reads.
type view struct {
	ID, Title, Outcome, Reason string
	Running                    bool
	RefreshSeconds             int
	Updated                    string
	Events                     []event
	Checks                     []check
	Usage                      string
	Body                       block
	LedgerError                string
	Phases                     []phaseRow
	// PhasesTotal is the pipeline's time (Execute's); ToPublished the
	// time from the trigger's enqueue to the pull request; "" unknown.
	PhasesTotal, ToPublished string
	PhasesError              string
}

// phaseRow is one row of the phases table.
type phaseRow struct{ Phase, Duration string }

// timings is the part of phases.json (jobs/pipeline.Timings) the page
// shows; the webhook does not compile the pipeline, so it reads its own.
type timings struct {
	Phases []struct {
		Phase      string `json:"phase"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"phases"`
	TotalMS       int64 `json:"total_ms"`
	ToPublishedMS int64 `json:"to_published_ms"`
}

// ms formats milliseconds for a person: 1.234 s, 12 ms.
func ms(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d ms", n)
	}
	return fmt.Sprintf("%.3f s", float64(n)/1000)
}

// phases fills the phases table from rec.Phases, when the run wrote it.
func (v *view) phases(raw []byte) {
	if len(raw) == 0 {
		return
	}
	var t timings
	if err := json.Unmarshal(raw, &t); err != nil {
		v.PhasesError = "phases.json could not be read: " + clean(err.Error())
		return
	}
	for _, p := range t.Phases {
		v.Phases = append(v.Phases, phaseRow{Phase: clean(p.Phase), Duration: ms(p.DurationMS)})
	}
	v.PhasesTotal = ms(t.TotalMS)
	if t.ToPublishedMS > 0 {
		v.ToPublished = ms(t.ToPublishedMS)
	}
}

// result is the part of result.json (docs/design.md §4.5) the page shows.
type result struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	Checks  []struct {
		Name       string `json:"name"`
		Command    string `json:"command"`
		Phase      string `json:"phase"`
		Ran        bool   `json:"ran"`
		ExitCode   int    `json:"exit_code"`
		Passed     bool   `json:"passed"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"checks"`
	Steps int          `json:"steps"`
	Usage ledger.Usage `json:"usage"`
}

// FileName is the page's name beside a local run's other files.
const FileName = "run.html"

// Page renders a run's page from its record as GET /runs/{id} shows it,
// for a file beside the run's other files (patchwright run's run.html).
// The page is self-contained: its styles are inline and its policy
// forbids fetching anything.
func Page(rec runstore.Record) ([]byte, error) { return render(rec, 10*time.Second) }

func render(rec runstore.Record, refresh time.Duration) ([]byte, error) {
	v := view{
		ID: clean(rec.ID), Running: !rec.Done, RefreshSeconds: int(refresh.Seconds()),
		Updated: rec.UpdatedAt.UTC().Format(time.RFC3339), Body: newBlock(string(rec.Body)),
		Title: "Run " + clean(rec.ID),
	}
	if rec.Repo != "" {
		v.Title = fmt.Sprintf("%s#%d, run %s", clean(rec.Repo), rec.Issue, clean(rec.ID))
	}
	v.Outcome = "running"
	if rec.Done {
		var res result
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			v.Outcome, v.Reason = "unknown", "result.json could not be read: "+err.Error()
		} else {
			v.Outcome, v.Reason = clean(res.Outcome), clean(res.Reason)
			v.Checks = checks(res)
			v.Usage = fmt.Sprintf("%d steps; %d input tokens (%d cached), %d output tokens",
				res.Steps, res.Usage.InputTokens, res.Usage.CachedInputTokens, res.Usage.OutputTokens)
		}
	}
	v.phases(rec.Phases)
	log, err := ledger.Read(bytes.NewReader(rec.Ledger))
	if err != nil {
		v.LedgerError = clean(err.Error())
	}
	v.Events = toEvents(log.Records)
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checks pairs each check's baseline and final runs.
func checks(res result) []check {
	var rows []check
	index := map[string]int{}
	for _, c := range res.Checks {
		i, ok := index[c.Name]
		if !ok {
			i = len(rows)
			index[c.Name] = i
			rows = append(rows, check{Name: clean(c.Name), Command: clean(c.Command), Baseline: "—", Final: "—"})
		}
		state := "could not run"
		switch {
		case c.Ran && c.Passed:
			state = "passed"
		case c.Ran:
			state = fmt.Sprintf("failed (exit %d)", c.ExitCode)
		}
		if c.Phase == "baseline" {
			rows[i].Baseline = state
		} else {
			rows[i].Final = state
			rows[i].Duration = (time.Duration(c.DurationMS) * time.Millisecond).String()
		}
	}
	return rows
}

var page = template.Must(template.New("run").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{{if .Running}}<meta http-equiv="refresh" content="{{.RefreshSeconds}}">{{end}}
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#1f2328}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-word}
.ev{border-left:3px solid #d0d7de;padding:.2em .8em;margin:.8em 0}
.meta{color:#59636e;font-size:.9em}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #d0d7de;padding:.3em .6em;text-align:left;vertical-align:top}
.diff{background:#f6f8fa;padding:.6em;font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-word}
.add{background:#dafbe1}.del{background:#ffebe9}.file{font-weight:bold;margin-top:.4em}
.ev.turn{border-color:#8250df}.ev.command{border-color:#0969da}.ev.check,.ev.newtest{border-color:#1a7f37}
.ev.finding,.ev.refusal,.ev.secrets{border-color:#bf8700}.failed{border-color:#cf222e}
</style></head><body>
<h1>{{.Title}}</h1>
<p><strong>{{.Outcome}}</strong>{{with .Reason}}: {{.}}{{end}}{{if .Running}} (this page reloads every {{.RefreshSeconds}} s){{end}}</p>
<p class="meta">Last updated {{.Updated}}{{with .Usage}}. {{.}}{{end}}</p>
{{with .Checks}}<h2>Verification</h2>
<table><tr><th>check</th><th>command</th><th>baseline</th><th>final</th><th>duration</th></tr>
{{range .}}<tr><td>{{.Name}}</td><td><code>{{.Command}}</code></td><td>{{.Baseline}}</td><td>{{.Final}}</td><td>{{.Duration}}</td></tr>
{{end}}</table>{{end}}
{{with .PhasesError}}<p>{{.}}</p>{{end}}
{{with .Phases}}<h2>Phases</h2>
<table><tr><th>phase</th><th>duration</th></tr>
{{range .}}<tr><td>{{.Phase}}</td><td>{{.Duration}}</td></tr>
{{end}}<tr><td>pipeline total</td><td>{{$.PhasesTotal}}</td></tr>
{{with $.ToPublished}}<tr><td>trigger to pull request</td><td>{{.}}</td></tr>
{{end}}</table>{{end}}
<h2>Run</h2>
{{with .LedgerError}}<p>Part of the ledger could not be read: {{.}}</p>{{end}}
{{range .Events}}<div class="ev {{.Kind}}{{if .Failed}} failed{{end}}">
<div><strong>{{.Title}}</strong> <span class="meta">{{.Meta}}</span></div>
{{if .Args.Text}}<pre>{{.Args.Text}}</pre>{{end}}
{{with .Diff}}<div class="diff">{{range .}}<div class="{{.Class}}">{{.Text}}</div>{{end}}</div>{{end}}
{{with .Table}}<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{range .Details}}<details><summary>{{.Name}} ({{.Body.Lines}} lines)</summary><pre>{{.Body.Text}}</pre></details>{{end}}
{{if .Body.Text}}{{if .Body.Folded}}<details><summary>{{.Body.Lines}} lines</summary><pre>{{.Body.Text}}</pre></details>{{else}}<pre>{{.Body.Text}}</pre>{{end}}{{end}}
</div>
{{else}}<p>Nothing recorded yet.</p>
{{end}}
{{if .Body.Text}}<h2>Pull-request body</h2>
<p class="meta">As posted, shown as text. The diff is on the pull request.</p>
<details open><summary>pr.md</summary><pre>{{.Body.Text}}</pre></details>{{end}}
</body></html>
`))
