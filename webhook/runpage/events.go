package runpage

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// table is a small table an event shows: checks, findings, commands.
type table struct {
	Head []string
	Rows [][]string
}

// diffLine is one line of a change: "add", "del" or "file" (a header).
type diffLine struct{ Class, Text string }

// detail is a named, folded block under an event (a check's output).
type detail struct {
	Name string
	Body block
}

// shower turns one ledger record into what the page shows.
type shower func(r ledger.Record) (event, error)

// showers are the event types the page shows as themselves; any other
// is shown as its fields (Kind "other").
var showers = map[string]shower{
	ledger.TypeRunStart:              showRunStart,
	ledger.TypeModelTurn:             showModelTurn,
	ledger.TypeToolCall:              showToolCall,
	ledger.TypeCommand:               showCommand,
	ledger.TypeCompaction:            showCompaction,
	ledger.TypeRunStop:               showRunStop,
	ledger.TypeUserMessage:           showUserMessage,
	ledger.TypeCheck:                 showCheck,
	ledger.TypeNewTest:               showNewTest,
	ledger.TypeFinding:               showFinding,
	ledger.TypeDependencies:          showDependencies,
	ledger.TypeEgressRefused:         showEgressRefused,
	ledger.TypeSetupDetected:         showSetupDetected,
	ledger.TypeServiceLog:            showServiceLog,
	ledger.TypeImageResolved:         showImageResolved,
	ledger.TypeSetupSecrets:          showSetupSecrets,
	ledger.TypeSetupSecretsWithheld:  showSecretsWithheld,
	ledger.TypeEgressRefusalsDropped: showRefusalsDropped,
	ledger.TypeSetupSecretFiles:      showSecretFiles,
	ledger.TypeAdvisoryCheck:         showAdvisoryCheck,
	ledger.TypeReview:                showReview,
	ledger.TypeIssueImages:           showIssueImages,
}

// joined are the kinds whose consecutive events share one table.
var joined = map[string]bool{"check": true, "newtest": true, "finding": true}

// toEvents shows records in order. Consecutive checks, new tests and
// findings join into one table.
func toEvents(records []ledger.Record) []event {
	var out []event
	for _, r := range records {
		e := toEvent(r)
		if n := len(out); n > 0 && joined[e.Kind] && out[n-1].Kind == e.Kind {
			prev := &out[n-1]
			prev.Table.Rows = append(prev.Table.Rows, e.Table.Rows...)
			prev.Details = append(prev.Details, e.Details...)
			prev.Failed = prev.Failed || e.Failed
			continue
		}
		out = append(out, e)
	}
	return out
}

func toEvent(r ledger.Record) event {
	if show, ok := showers[r.Type]; ok {
		e, err := show(r)
		if err == nil {
			return e
		}
		return event{Kind: "other", Title: clean(r.Type) + " (could not be read)", Body: newBlock(err.Error())}
	}
	return event{Kind: "other", Title: "Event " + clean(r.Type), Body: newBlock(fieldsText(r.Raw, "seq", "time", "type"))}
}

// decode reads r into a new T.
func decode[T any](r ledger.Record) (T, error) {
	var p T
	err := r.Decode(&p)
	return p, err
}

func showRunStart(r ledger.Record) (event, error) {
	p, err := decode[ledger.RunStart](r)
	meta := fmt.Sprintf("model %s; tools: %s", p.Model, strings.Join(p.Tools, ", "))
	if p.Limits.MaxSteps > 0 {
		meta += fmt.Sprintf("; at most %d steps", p.Limits.MaxSteps)
	}
	return event{Kind: "prompt", Title: "Prompt (the issue and the instructions)", Meta: clean(meta), Body: newBlock(p.Prompt)}, err
}

func showModelTurn(r ledger.Record) (event, error) {
	p, err := decode[ledger.ModelTurn](r)
	var calls []string
	for _, c := range p.ToolCalls {
		calls = append(calls, "→ "+c.Name+": "+oneLineArgs(c.Arguments))
	}
	meta := fmt.Sprintf("%s, %d in / %d out tokens, %s", p.Model, p.InputTokens, p.OutputTokens, p.Duration.Round(time.Millisecond))
	if p.CachedInputTokens > 0 {
		meta += fmt.Sprintf(", %d input tokens cached", p.CachedInputTokens)
	}
	if len(p.FellBack) > 0 {
		meta += "; after failures of: " + strings.Join(p.FellBack, "; ")
	}
	text := p.Text
	if p.Error != "" {
		text = "The call failed: " + p.Error
	}
	return event{Kind: "turn", Step: p.Step, Title: fmt.Sprintf("Model turn %d", p.Step), Meta: clean(meta),
		Body: newBlock(text), Args: newBlock(strings.Join(calls, "\n")), Failed: p.Error != ""}, err
}

func showToolCall(r ledger.Record) (event, error) {
	p, err := decode[ledger.ToolCall](r)
	e := event{Kind: "tool", Step: p.Step, Title: "Tool " + clean(p.Tool), Body: newBlock(p.Result)}
	meta := fmt.Sprintf("%s, %d bytes of result", p.Duration.Round(time.Millisecond), p.ResultBytes)
	if p.ErrorCode != "" {
		meta += ", error " + string(p.ErrorCode)
		e.Failed = true
	}
	if len(p.Changed) > 0 {
		meta += "; changed " + strings.Join(p.Changed, ", ")
	}
	for _, s := range []string{p.Panic, p.Failure} {
		if s != "" {
			meta += "; " + s
			e.Failed = true
		}
	}
	e.Meta = clean(meta)
	switch p.Tool {
	case "edit", "write_file":
		e.Diff = argsDiff(p.Tool, p.Arguments)
	case "submit_plan":
		e.Args = planBlock(p.Arguments)
	}
	if e.Diff == nil && e.Args.Text == "" {
		e.Args = newBlock(fieldsText([]byte(p.Arguments)))
	}
	return e, err
}

func showCommand(r ledger.Record) (event, error) {
	p, err := decode[ledger.Command](r)
	meta := fmt.Sprintf("exit %d, %s", p.ExitCode, p.Duration.Round(time.Millisecond))
	if p.TimedOut {
		meta += ", timed out"
	}
	if p.OOMKilled {
		meta += ", out of memory"
	}
	meta += fmt.Sprintf(", %d bytes of output, by %s", p.OutputBytes, p.Tool)
	return event{Kind: "command", Step: p.Step, Title: "$ " + clean(p.CommandRecord.Command), ExitCode: p.ExitCode,
		Meta: clean(meta), Body: newBlock(p.Output), Failed: p.ExitCode != 0 || p.TimedOut || p.OOMKilled}, err
}

func showCompaction(r ledger.Record) (event, error) {
	p, err := decode[ledger.Compaction](r)
	e := event{Kind: "compaction", Step: p.Step, Title: fmt.Sprintf("Context compacted before turn %d", p.Step),
		Meta: clean(fmt.Sprintf("%s: %d old observations replaced, %d → %d tokens", p.Reason, p.Replaced, p.TokensBefore, p.TokensAfter))}
	if s := p.Summary; s != nil {
		e.Meta += clean(fmt.Sprintf("; summary by %s (%d summarised, %d in / %d out tokens)", s.Model, s.Summarised, s.Usage.InputTokens, s.Usage.OutputTokens))
		e.Body = newBlock(s.Text)
		if s.Error != "" {
			e.Body = newBlock("The summary was not used: " + s.Error)
		}
	}
	return e, err
}

func showRunStop(r ledger.Record) (event, error) {
	p, err := decode[ledger.RunStop](r)
	meta := fmt.Sprintf("%s; %d steps, %d input / %d output tokens", p.Detail, p.Steps, p.Usage.InputTokens, p.Usage.OutputTokens)
	if len(p.Changed) > 0 {
		meta += "; changed " + strings.Join(p.Changed, ", ")
	}
	return event{Kind: "stop", Title: "Stopped: " + clean(p.Reason), Meta: clean(meta), Body: newBlock(p.Summary)}, err
}

func showUserMessage(r ledger.Record) (event, error) {
	p, err := decode[ledger.UserMessage](r)
	return event{Kind: "note", Step: p.Step, Title: clean(fmt.Sprintf("Note from @%s, before turn %d", p.From, p.Step)), Body: newBlock(p.Text)}, err
}

// checkState says how one check went, in words.
func checkState(c verify.CheckResult) string {
	switch {
	case !c.Ran:
		return "not run: " + c.NotRunReason
	case c.TimedOut:
		return "timed out"
	case c.OOMKilled:
		return "out of memory"
	case c.Flaky:
		return "flaky: failed, then passed on a re-run"
	case c.Passed:
		return "passed"
	}
	return fmt.Sprintf("failed (exit %d)", c.ExitCode)
}

func showCheck(r ledger.Record) (event, error) {
	p, err := decode[ledger.CheckEvent](r)
	if err != nil {
		return event{}, err
	}
	c, err := verify.CheckFrom(&p)
	e := event{Kind: "check", Title: "Checks", Failed: c.Ran && !c.Passed,
		Table: &table{Head: []string{"check", "phase", "command", "result", "runs (failed)"}, Rows: [][]string{
			cleanAll(c.Name, string(c.Phase), c.Command, checkState(c), fmt.Sprintf("%d (%d)", c.Runs, c.Failures)),
		}}}
	if c.Output != "" {
		e.Details = []detail{{Name: clean(c.Name + ", " + string(c.Phase) + ": output"), Body: newBlock(c.Output)}}
	}
	return e, err
}

func showNewTest(r ledger.Record) (event, error) {
	p, err := decode[ledger.NewTestEvent](r)
	if err != nil {
		return event{}, err
	}
	t, err := verify.NewTestFrom(&p)
	state := strings.ReplaceAll(string(t.Status), "_", " ")
	if t.Reason != "" {
		state += ": " + t.Reason
	}
	e := event{Kind: "newtest", Title: "New tests, run against the code before the change",
		Table: &table{Head: []string{"test", "file", "before the change", "command"}, Rows: [][]string{
			cleanAll(t.Name, t.File, state, t.Command),
		}}}
	if t.Output != "" {
		e.Details = []detail{{Name: clean(t.Name + ": output"), Body: newBlock(t.Output)}}
	}
	return e, err
}

func showFinding(r ledger.Record) (event, error) {
	p, err := decode[ledger.FindingEvent](r)
	where := p.Path
	if p.Line > 0 {
		where += fmt.Sprintf(":%d", p.Line)
	}
	return event{Kind: "finding", Title: "Findings", Failed: findings.Blocks(p.Kind),
		Table: &table{Head: []string{"finding", "where", "detail"}, Rows: [][]string{cleanAll(p.Kind, where, p.Detail)}}}, err
}

func showDependencies(r ledger.Record) (event, error) {
	p, err := decode[ledger.DependencyEvent](r)
	title := "Dependency setup after the change"
	if p.ByModel {
		title = "Dependency setup the model asked for"
	}
	meta := "for " + strings.Join(p.Manifests, ", ")
	if p.Configured {
		meta += "; the default branch's setup: commands"
	}
	var fetched []string
	for _, d := range p.Fetched {
		s := d.What + " " + d.Name + " " + d.Version
		if d.Was != "" {
			s += " (was " + d.Was + ")"
		}
		fetched = append(fetched, s)
	}
	e := event{Kind: "dependencies", Title: title, Meta: clean(meta),
		Table: &table{Head: []string{"command", "exit"}},
		Body:  newBlock(strings.Join(append(fetched, p.Sources...), "\n"))}
	for _, c := range p.Commands {
		e.Table.Rows = append(e.Table.Rows, cleanAll(c.Command, exitText(c.ExitCode, c.TimedOut)))
		e.Failed = e.Failed || c.ExitCode != 0 || c.TimedOut
	}
	return e, err
}

func showEgressRefused(r ledger.Record) (event, error) {
	p, err := decode[ledger.EgressRefused](r)
	return event{Kind: "refusal", Failed: true, Title: clean(fmt.Sprintf("Connection refused: %s:%d", p.Host, p.Port)),
		Meta: clean(p.Phase + ": " + p.Reason), Body: newBlock(p.Command)}, err
}

func showSetupDetected(r ledger.Record) (event, error) {
	p, err := decode[ledger.SetupDetected](r)
	e := event{Kind: "setup", Title: "Setup detected from the manifests (the repository configures none)",
		Table: &table{Head: []string{"command", "manifest", "exit"}}}
	for _, c := range p.Commands {
		e.Table.Rows = append(e.Table.Rows, cleanAll(c.Command, c.Manifest, exitText(c.ExitCode, c.TimedOut)))
		e.Failed = e.Failed || c.Failed()
	}
	return e, err
}

func showServiceLog(r ledger.Record) (event, error) {
	p, err := decode[ledger.ServiceLog](r)
	return event{Kind: "service", Title: "Service " + clean(p.Name), Meta: clean(p.Image + ", the end of its output"), Body: newBlock(p.Log)}, err
}

func showImageResolved(r ledger.Record) (event, error) {
	p, err := decode[ledger.ImageResolved](r)
	title := "Sandbox image " + clean(p.Ref)
	if p.Service != "" {
		title = "Service " + clean(p.Service) + " image " + clean(p.Ref)
	}
	meta := "on the engine"
	if p.Pulled {
		meta = "pulled for this run"
	}
	return event{Kind: "image", Title: title, Meta: meta + ", every container used " + clean(p.Use)}, err
}

func showSetupSecrets(r ledger.Record) (event, error) {
	p, err := decode[ledger.SetupSecretsGiven](r)
	return event{Kind: "secrets", Title: "Setup-only secrets given to setup", Meta: "names only, never values",
		Body: newBlock(strings.Join(p.Names, "\n"))}, err
}

func showSecretsWithheld(r ledger.Record) (event, error) {
	p, err := decode[ledger.SetupSecretsWithheld](r)
	return event{Kind: "secrets", Failed: true, Title: "Setup-only secrets withheld from setup", Meta: clean(p.Reason),
		Body: newBlock(strings.Join(p.Names, "\n"))}, err
}

func showRefusalsDropped(r ledger.Record) (event, error) {
	p, err := decode[ledger.EgressRefusalsDropped](r)
	hosts := fmt.Sprint(p.Hosts)
	if p.HostsAtLeast {
		hosts = "at least " + hosts
	}
	return event{Kind: "refusal", Failed: true, Title: fmt.Sprintf("%d more connections refused", p.Count),
		Meta: "to " + hosts + " hosts, past the run's bound on refusals recorded one by one"}, err
}

func showSecretFiles(r ledger.Record) (event, error) {
	p, err := decode[ledger.SetupSecretFiles](r)
	e := event{Kind: "secrets", Failed: true, Title: "Files setup wrote a setup-only secret into, removed",
		Meta: "paths and secret names, never values", Table: &table{Head: []string{"file", "where", "secrets"}}}
	for _, f := range p.Files {
		where := "work tree"
		if f.Cache {
			where = "build cache"
		}
		e.Table.Rows = append(e.Table.Rows, cleanAll(f.Path, where, strings.Join(f.Names, ", ")))
	}
	return e, err
}

func exitText(code int, timedOut bool) string {
	if timedOut {
		return "timed out"
	}
	return fmt.Sprint(code)
}

func cleanAll(s ...string) []string {
	for i := range s {
		s[i] = clean(s[i])
	}
	return s
}

// argsDiff shows an edit's replacements and a written file as a diff;
// nil when the arguments cannot be read (they are then shown as fields).
func argsDiff(tool, args string) []diffLine {
	var edits []struct {
		Path, Old, New string
	}
	if tool == "write_file" {
		var p struct{ Path, Content string }
		if json.Unmarshal([]byte(args), &p) != nil || p.Path == "" {
			return nil
		}
		edits = append(edits, struct{ Path, Old, New string }{p.Path + " (whole file)", "", p.Content})
	} else {
		var p struct {
			Edits []struct {
				Path    string `json:"path"`
				OldText string `json:"old_text"`
				NewText string `json:"new_text"`
			} `json:"edits"`
		}
		if json.Unmarshal([]byte(args), &p) != nil || len(p.Edits) == 0 {
			return nil
		}
		for _, e := range p.Edits {
			edits = append(edits, struct{ Path, Old, New string }{e.Path, e.OldText, e.NewText})
		}
	}
	var out []diffLine
	for _, e := range edits {
		out = append(out, diffLine{"file", clean(e.Path)})
		out = append(out, diffLines("del", "-", e.Old)...)
		out = append(out, diffLines("add", "+", e.New)...)
	}
	return out
}

func diffLines(class, mark, text string) []diffLine {
	if text == "" {
		return nil
	}
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		out = append(out, diffLine{class, mark + clean(l)})
	}
	return out
}

// planBlock shows submit_plan's arguments as the plan's text.
func planBlock(args string) block {
	var p struct {
		Files                         []string
		Approach, Verification, Risks string
	}
	if json.Unmarshal([]byte(args), &p) != nil {
		return block{}
	}
	return newBlock(fmt.Sprintf("Files to change:\n- %s\n\nApproach:\n%s\n\nHow it will be verified:\n%s\n\nRisks:\n%s",
		strings.Join(p.Files, "\n- "), p.Approach, p.Verification, p.Risks))
}

// fieldsText shows a JSON object as "name: value" lines, without the
// names in skip; text that is no JSON object is shown as it is.
func fieldsText(raw []byte, skip ...string) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	var lines []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !slices.Contains(skip, k) && !yield(k) {
				return
			}
		}
	}) {
		lines = append(lines, k+": "+valueText(m[k]))
	}
	return strings.Join(lines, "\n")
}

// valueText is one decoded JSON value as text: strings as they are,
// lists joined by commas.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, x := range v {
			parts = append(parts, valueText(x))
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		b, _ := json.Marshal(v)
		return fieldsText(b)
	case nil:
		return "none"
	}
	return fmt.Sprint(v)
}

// oneLineArgs is a tool call's arguments on one line, cut at 200
// characters.
func oneLineArgs(args string) string {
	s := []rune(strings.Join(strings.Fields(strings.ReplaceAll(fieldsText([]byte(args)), "\n", "; ")), " "))
	if len(s) > 200 {
		s = append(s[:200], '…')
	}
	return string(s)
}
