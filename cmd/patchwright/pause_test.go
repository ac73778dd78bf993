package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/jobs/redistest"
)

const testRedisDB = 13 // each package its own DB: packages' tests run in parallel

// operatorRun runs an operator command against the test Redis.
func operatorRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	url := "redis://" + os.Getenv("PATCHWRIGHT_TEST_REDIS_ADDR") + "/13"
	code := run(context.Background(), append(args, "--redis-url", url, "--by", "ops"), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// pause, paused and resume change and show the pauses the workers read;
// bad scopes and a missing Redis are usage errors.
func TestPauseCommands(t *testing.T) {
	redistest.Client(t, testRedisDB)
	steps := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"paused"}, 0, "nothing is paused"},
		{[]string{"pause", "--repo", "Octo/Cat"}, 0, "paused repository octo/cat"},
		{[]string{"pause", "--repo", "octo/cat"}, 0, "repository octo/cat was already paused by ops"},
		{[]string{"pause", "--installation", "9"}, 0, "paused installation 9"},
		{[]string{"paused"}, 0, "installation 9\tpaused by ops"},
		{[]string{"resume", "--repo", "octo/cat"}, 0, "resumed repository octo/cat"},
		{[]string{"resume", "--repo", "octo/cat"}, 0, "was not paused"},
		{[]string{"pause", "--repo", "octocat"}, 1, "want OWNER/NAME"},
		{[]string{"pause", "--repo", "o/r", "--installation", "3"}, 1, "not both"},
		{[]string{"pause", "extra"}, 1, "unexpected arguments"},
	}
	for _, s := range steps {
		code, out, errOut := operatorRun(t, s.args...)
		if code != s.code || !strings.Contains(out+errOut, s.out) {
			t.Errorf("%v: exit %d, %q %q; want %d and %q", s.args, code, out, errOut, s.code, s.out)
		}
	}
	if _, out, _ := operatorRun(t, "paused"); strings.Contains(out, "octo/cat") {
		t.Errorf("paused after resume still lists octo/cat:\n%s", out)
	}
	t.Setenv("PATCHWRIGHT_REDIS_URL", "")
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"paused"}, &stderr, &stderr); code != 1 || !strings.Contains(stderr.String(), "needs PATCHWRIGHT_REDIS_URL") {
		t.Errorf("paused without Redis: exit %d, %q", code, stderr.String())
	}
}

func TestPauseHelp(t *testing.T) {
	for _, c := range []string{"pause", "resume", "paused"} {
		help := helpOf(t, c)
		if !strings.HasPrefix(help, "usage: patchwright "+c) || !strings.Contains(help, "-redis-url") {
			t.Errorf("%s -h:\n%s", c, help)
		}
	}
}
