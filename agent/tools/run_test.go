package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/sandbox"
)

func out(s string) sandbox.Output {
	return sandbox.Output{Head: []byte(s), Total: int64(len(s)), SHA256: "h-" + s}
}

func TestRunWithFakeSandbox(t *testing.T) {
	bigHead, bigTail := strings.Repeat("h", 100), strings.Repeat("t", 100)
	tests := map[string]struct {
		args     any
		result   sandbox.Result
		err      error
		code     Code
		goErr    bool
		has      []string
		timeout  time.Duration // what the sandbox must be asked for
		commands int
	}{
		"exit code, duration, both streams": {
			args:    RunParams{Command: "go test ./..."},
			result:  sandbox.Result{ExitCode: 1, Duration: 1500 * time.Millisecond, Stdout: out("FAIL x\n"), Stderr: out("warn\n")},
			has:     []string{"exit code 1 in 1.5s\n", "--- stdout (7 bytes) ---\nFAIL x\n", "--- stderr (5 bytes) ---\nwarn\n"},
			timeout: DefaultLimits.RunTimeout, commands: 1,
		},
		"big output keeps head and tail with a marker": {
			args:    RunParams{Command: "yes | head -c 10000"},
			result:  sandbox.Result{Stdout: sandbox.Output{Head: []byte(bigHead), Tail: []byte(bigTail), Total: 10000, SHA256: "abc"}},
			has:     []string{"--- stdout (10000 bytes) ---\n" + bigHead + "\n[... 9800 bytes dropped ...]\n" + bigTail + "\n"},
			timeout: DefaultLimits.RunTimeout, commands: 1,
		},
		"timeout gives the partial output": {
			args:   RunParams{Command: "sleep 100", TimeoutS: 5},
			result: sandbox.Result{ExitCode: 137, TimedOut: true, Duration: 5 * time.Second, Stdout: out("started\n")},
			code:   Timeout, has: []string{"killed after 5s", "partial output:\n--- stdout (8 bytes) ---\nstarted\n"},
			timeout: 5 * time.Second, commands: 1,
		},
		"timeout_s is capped": {
			args:    RunParams{Command: "make", TimeoutS: 100000},
			has:     []string{"timeout_s capped at 600s"},
			timeout: DefaultLimits.MaxRunTimeout, commands: 1,
		},
		"out of memory is said": {
			args:   RunParams{Command: "big"},
			result: sandbox.Result{ExitCode: 137, OOMKilled: true},
			has:    []string{"killed: out of memory"}, timeout: DefaultLimits.RunTimeout, commands: 1,
		},
		"empty command":    {args: RunParams{Command: "  "}, code: InvalidArguments},
		"negative timeout": {args: RunParams{Command: "ls", TimeoutS: -1}, code: InvalidArguments},
		"timeout as text":  {args: `{"command":"ls","timeout_s":"10"}`, code: InvalidArguments},
		"dead container is a Go error": {
			args: RunParams{Command: "ls"}, err: sandbox.ErrClosed, goErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, nil)
			env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) { return tc.result, tc.err }
			res, err := env.callErr(t, "run", tc.args)
			if tc.goErr {
				if err == nil {
					t.Fatalf("want a Go error, got %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantCode(t, res, tc.code)
			for _, h := range tc.has {
				if !strings.Contains(res.Text, h) {
					t.Errorf("text lacks %q:\n%s", h, res.Text)
				}
			}
			if len(res.Commands) != tc.commands {
				t.Fatalf("Commands = %v", res.Commands)
			}
			if tc.commands == 0 {
				if len(env.sb.got) != 0 {
					t.Errorf("sandbox was called: %v", env.sb.got)
				}
				return
			}
			got := env.sb.got[0]
			if got.Timeout != tc.timeout || got.OutputLimit != DefaultLimits.RunOutputLimit {
				t.Errorf("sandbox got %+v", got)
			}
			rec := res.Commands[0]
			if rec.Command != got.Script || rec.ExitCode != tc.result.ExitCode || rec.TimedOut != tc.result.TimedOut ||
				rec.StdoutSHA256 != tc.result.Stdout.SHA256 || rec.OutputBytes != tc.result.Stdout.Total+tc.result.Stderr.Total {
				t.Errorf("record %+v does not match result %+v", rec, tc.result)
			}
		})
	}
}

// After a command rewrote a file, the next edit sees it through the hash.
func TestRunChangesMakeReadsStale(t *testing.T) {
	env := newEnv(t, map[string]string{"a.go": "package a\n"})
	env.call(t, "read_file", ReadFileParams{Path: "a.go"})
	env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) {
		// What gofmt in the container would do to the bind mount.
		return sandbox.Result{}, env.ws.WriteFile("a.go", []byte("package a // formatted\n"))
	}
	wantCode(t, env.call(t, "run", RunParams{Command: "gofmt -w ."}), "")
	wantCode(t, env.call(t, "edit", edits(Edit{Path: "a.go", OldText: "package a", NewText: "package b"})), StaleFile)
}

func TestVerifyWithFakeVerifier(t *testing.T) {
	env := newEnv(t, nil)
	env.ver.checks = []Check{
		{Name: "build", Passed: true, CommandRecord: CommandRecord{Command: "go build ./...", Duration: time.Second, Output: "ok\n"}},
		{Name: "test", CommandRecord: CommandRecord{Command: "go test ./...", ExitCode: 1, Duration: 2 * time.Second, Output: "--- FAIL: TestX\nFAIL\n", StdoutSHA256: "s"}},
	}
	res := env.call(t, "verify", `{}`)
	wantCode(t, res, "")
	want := "1 of 2 checks passed\n" +
		"PASS build: go build ./... (exit code 0, 1s)\n" +
		"FAIL test: go test ./... (exit code 1, 2s)\n" +
		"\n=== test output (tail) ===\n--- FAIL: TestX\nFAIL\n"
	if res.Text != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Text, want)
	}
	if len(res.Commands) != 2 || res.Commands[1].StdoutSHA256 != "s" || res.Commands[0].Command != "go build ./..." {
		t.Errorf("Commands = %+v", res.Commands)
	}

	// Providers send nothing or null for a tool without parameters.
	for _, args := range []string{"", "null", " {} "} {
		wantCode(t, env.call(t, "verify", args), "")
	}
	wantCode(t, env.call(t, "verify", `{"x":1}`), InvalidArguments)

	env.ver.checks = nil
	if res := env.call(t, "verify", `{}`); !strings.Contains(res.Text, "no verification checks") {
		t.Errorf("no checks: %s", res.Text)
	}
	env.ver.err = errors.New("container gone")
	if _, err := env.callErr(t, "verify", `{}`); err == nil || !strings.Contains(err.Error(), "container gone") {
		t.Errorf("err = %v", err)
	}
}

func TestFinish(t *testing.T) {
	env := newEnv(t, nil)
	res := env.call(t, "finish", FinishParams{Summary: "Fixed the sign in add."})
	wantCode(t, res, "")
	if res.Finish == nil || res.Finish.Summary != "Fixed the sign in add." {
		t.Fatalf("Finish = %+v", res.Finish)
	}
	if !strings.Contains(res.Text, "application now runs the verification checks itself") {
		t.Errorf("text: %s", res.Text)
	}
	for _, args := range []string{`{}`, `{"summary":"  "}`, `{"summary":null}`} {
		res := env.call(t, "finish", args)
		wantCode(t, res, InvalidArguments)
		if res.Finish != nil {
			t.Errorf("%s: finished anyway", args)
		}
	}
}

func TestRunDeniedCommand(t *testing.T) {
	env := newEnv(t, nil)
	env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) {
		return sandbox.Result{}, fmt.Errorf("exec: %w", &sandbox.DeniedError{Command: "curl", Reason: "network tools are not available in the agent phase"})
	}
	res := env.call(t, "run", RunParams{Command: "curl https://example.com"})
	wantCode(t, res, CommandDenied)
	if !strings.Contains(res.Text, "network tools are not available in the agent phase") || len(res.Commands) != 0 {
		t.Errorf("result: %+v", res)
	}
}
