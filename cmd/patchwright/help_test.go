package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// helpOf runs `patchwright args... -h` and returns what it printed.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append(args, "-h"), &stdout, &stderr); code != 0 {
		t.Fatalf("%v -h: exit %d, stderr %q", args, code, stderr.String())
	}
	return stdout.String() + stderr.String()
}

// unsetPatchwrightEnv clears every PATCHWRIGHT_ variable for the test.
func unsetPatchwrightEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "PATCHWRIGHT_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

// TestServiceHelp: serve and worker list only the settings each reads,
// under their groups in order, each with its type, variable and default,
// and never a variable's value.
func TestServiceHelp(t *testing.T) {
	unsetPatchwrightEnv(t)
	t.Setenv("PATCHWRIGHT_WEBHOOK_SECRET", "do-not-print-me")
	t.Setenv("PATCHWRIGHT_PRIVATE_KEY", "do-not-print-me-either")
	var raw rawConfig
	all := raw.table()
	for _, command := range []string{"serve", "worker"} {
		t.Run(command, func(t *testing.T) {
			help := helpOf(t, command)
			if strings.Contains(help, "do-not-print-me") {
				t.Fatalf("help shows a variable's value:\n%s", help)
			}
			if !strings.HasPrefix(help, "usage: patchwright "+command+" [flags]\n") {
				t.Errorf("help starts %q", help[:min(len(help), 60)])
			}
			last := -1
			for _, s := range all {
				line := "  --" + s.flag
				if s.kind != "bool" {
					line += " " + kindName(s.kind)
				}
				line += "\n"
				i := strings.Index(help, line)
				wanted := command == "serve" || s.group != groupWebhook
				switch {
				case !wanted && i >= 0:
					t.Errorf("%s lists %s, which it does not read", command, s.flag)
				case wanted && i < 0:
					t.Errorf("%s lacks %q", command, line)
				case wanted:
					desc, _, _ := strings.Cut(help[i+len(line):], "\n")
					if !strings.Contains(desc, "["+s.env+"]") || (s.defaultText() != "" && !strings.HasSuffix(desc, "(default "+s.defaultText()+")")) {
						t.Errorf("%s: %q lacks its variable or default", s.flag, desc)
					}
					g := strings.Index(help, "\n"+s.group+":\n")
					if g < 0 || g > i || g < last {
						t.Errorf("%s is not under its group %q, in the groups' order", s.flag, s.group)
					}
					last = g
				}
			}
		})
	}
}

func kindName(kind string) string {
	if kind == "" {
		return "string"
	}
	return kind
}

// TestServiceFlagsAreTheirCommands: a flag worker does not read is an
// unknown flag there; a switch stands alone.
func TestServiceFlagsAreTheirCommands(t *testing.T) {
	unsetPatchwrightEnv(t)
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"worker", "--webhook-secret", "s"}, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "flag provided but not defined: -webhook-secret") {
		t.Errorf("worker --webhook-secret: exit %d, stderr %q", code, stderr.String())
	}
	cfg, err := parseConfig("serve", []string{"--webhook-secret", "s", "--app-id", "1", "--private-key", "k", "--allow-open-network", "--worker-concurrency", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.sandbox.allowOpenNetwork || cfg.workerConcurrency != 3 {
		t.Errorf("config = %+v", cfg)
	}
	if _, err := parseConfig("serve", []string{"--webhook-secret", "s", "--app-id", "1", "--private-key", "k", "--allow-open-network=maybe"}, io.Discard); err == nil || !strings.Contains(err.Error(), `PATCHWRIGHT_ALLOW_OPEN_NETWORK: "maybe" is not true or false`) {
		t.Errorf("--allow-open-network=maybe: %v", err)
	}
}

// TestLocalCommandsHelp: run and eval list their own flags with their
// types, and none of serve's.
func TestLocalCommandsHelp(t *testing.T) {
	tests := map[string]struct {
		args []string
		want []string
	}{
		"run":          {args: []string{"run"}, want: []string{"  -repo string\n", "  -max-steps int\n", "  -json\n", "  -image string\n", "[PATCHWRIGHT_MODEL]"}},
		"eval":         {args: []string{"eval"}, want: []string{"  -tasks string\n", "  -out string\n"}},
		"eval compare": {args: []string{"eval", "compare"}, want: []string{"usage: patchwright eval compare"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			help := helpOf(t, tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(help, w) {
					t.Errorf("help lacks %q:\n%s", w, help)
				}
			}
			if strings.Contains(help, "webhook-secret") || strings.Contains(help, "redis-url") {
				t.Errorf("help lists serve's settings:\n%s", help)
			}
		})
	}
}
