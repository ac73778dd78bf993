package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

// RunParams are the parameters of run.
type RunParams struct {
	Command  string `json:"command" jsonschema_description:"Shell command, run with /bin/sh -c in the repository root inside the sandbox (no network)."`
	TimeoutS int    `json:"timeout_s,omitempty" jsonschema:"minimum=1" jsonschema_description:"Time limit in seconds. Default 120; larger values are capped by the operator's maximum."`
}

func (s *Set) run(ctx context.Context, p RunParams) (Result, error) {
	if strings.TrimSpace(p.Command) == "" {
		return fail(InvalidArguments, "command is empty", "give a shell command, for example go test ./..."), nil
	}
	if p.TimeoutS < 0 {
		return fail(InvalidArguments, fmt.Sprintf("timeout_s %d is negative", p.TimeoutS), "leave timeout_s out or give a positive number of seconds"), nil
	}
	timeout, note := s.limits.RunTimeout, ""
	if p.TimeoutS > 0 {
		timeout = time.Duration(p.TimeoutS) * time.Second
		if timeout > s.limits.MaxRunTimeout {
			timeout = s.limits.MaxRunTimeout
			note = fmt.Sprintf("(timeout_s capped at %ds)\n", int(timeout/time.Second))
		}
	}
	res, err := s.sandbox.Exec(ctx, sandbox.Command{Script: p.Command, Timeout: timeout, OutputLimit: s.limits.RunOutputLimit})
	if err != nil {
		if reason, ok := deniedReason(err); ok {
			return fail(CommandDenied, "the sandbox policy refused this command: "+reason,
				"do it another way (the sandbox has no network; edit files with the file tools)"), nil
		}
		return Result{}, fmt.Errorf("run %q: %w", p.Command, err)
	}
	rec := CommandRecordOf(p.Command, res)
	out := Result{Commands: []CommandRecord{rec}}
	if res.TimedOut {
		out.Code = Timeout
		out.Text = fail(Timeout, fmt.Sprintf("the command was killed after %s", timeout),
			"make it faster or narrower (one package, one test with -run), or raise timeout_s").Text +
			"\npartial output:\n" + rec.Output
		return out, nil
	}
	var b strings.Builder
	b.WriteString(note)
	fmt.Fprintf(&b, "exit code %d in %s", res.ExitCode, res.Duration.Round(time.Millisecond))
	if res.OOMKilled {
		b.WriteString(" (killed: out of memory)")
	}
	b.WriteByte('\n')
	b.WriteString(rec.Output)
	out.Text = b.String()
	return out, nil
}

// CommandRecordOf turns a sandbox result into the ledger's record: the one
// conversion, used by run, verify and setup. Output is what the model
// sees: each stream's head and tail with a marker where bytes were
// dropped; the digests cover every byte.
func CommandRecordOf(command string, res sandbox.Result) CommandRecord {
	return CommandRecord{
		Command:      command,
		ExitCode:     res.ExitCode,
		Duration:     res.Duration,
		TimedOut:     res.TimedOut,
		OOMKilled:    res.OOMKilled,
		Output:       renderStream("stdout", res.Stdout) + renderStream("stderr", res.Stderr),
		OutputBytes:  res.Stdout.Total + res.Stderr.Total,
		StdoutSHA256: res.Stdout.SHA256,
		StderrSHA256: res.Stderr.SHA256,
	}
}

func renderStream(name string, o sandbox.Output) string {
	if o.Total == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s (%d bytes) ---\n", name, o.Total)
	b.Write(o.Head)
	if o.Truncated() {
		dropped := o.Total - int64(len(o.Head)+len(o.Tail))
		if len(o.Head) > 0 && o.Head[len(o.Head)-1] != '\n' {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[... %d bytes dropped ...]\n", dropped)
	}
	b.Write(o.Tail)
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// VerifyParams are the parameters of verify: none.
type VerifyParams struct{}

func (s *Set) verify(ctx context.Context, _ VerifyParams) (Result, error) {
	checks, err := s.verifier.Verify(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("verify: %w", err)
	}
	if len(checks) == 0 {
		return Result{Text: "no verification checks are configured or detected for this repository"}, nil
	}
	var (
		b      strings.Builder
		passed int
		out    Result
	)
	for _, c := range checks {
		out.Commands = append(out.Commands, c.CommandRecord)
		if c.Passed {
			passed++
		}
	}
	fmt.Fprintf(&b, "%d of %d checks passed\n", passed, len(checks))
	for _, c := range checks {
		status := "PASS"
		if !c.Passed {
			status = "FAIL"
		}
		fmt.Fprintf(&b, "%s %s: %s (exit code %d, %s", status, c.Name, c.Command, c.ExitCode, c.Duration.Round(time.Millisecond))
		if c.TimedOut {
			b.WriteString(", timed out")
		}
		b.WriteString(")\n")
	}
	for _, c := range checks {
		if !c.Passed && c.Output != "" {
			fmt.Fprintf(&b, "\n=== %s output (tail) ===\n%s", c.Name, c.Output)
			if !strings.HasSuffix(c.Output, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	out.Text = b.String()
	return out, nil
}

// FinishParams are the parameters of finish.
type FinishParams struct {
	Summary string `json:"summary" jsonschema_description:"What you changed and why, for the pull-request description. It is shown as your description, not as evidence."`
}

func (s *Set) finish(_ context.Context, p FinishParams) (Result, error) {
	if strings.TrimSpace(p.Summary) == "" {
		return fail(InvalidArguments, "summary is empty", "describe what you changed and why in a few sentences"), nil
	}
	return Result{
		Text:   "finished. The application now runs the verification checks itself and reports their results; no further tool calls are needed.",
		Finish: &FinishRecord{Summary: p.Summary},
	}, nil
}
