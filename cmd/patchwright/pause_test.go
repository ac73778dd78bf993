package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs"
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

// audit export prints the log as JSON lines, oldest first, filtered by
// --since and --repo; pause and resume are in it with their operator.
func TestAuditExport(t *testing.T) {
	rdb := redistest.Client(t, testRedisDB)
	q := jobs.NewQueue(rdb)
	old := jobs.AuditEntry{Time: time.Now().Add(-48 * time.Hour).UTC(), Actor: "ann", Action: "/agent stop", Repo: "o/r", Issue: 1}
	if err := q.Audit(t.Context(), old, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.Audit(t.Context(), jobs.AuditEntry{Actor: "bob", Action: "label agent", Repo: "x/y", Issue: 2}, 0); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := operatorRun(t, "pause", "--repo", "o/r"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := operatorRun(t, "resume", "--repo", "o/r"); code != 0 {
		t.Fatal(errOut)
	}
	lines := func(args ...string) []jobs.AuditEntry {
		t.Helper()
		code, out, errOut := operatorRun(t, append([]string{"audit", "export"}, args...)...)
		if code != 0 {
			t.Fatalf("audit export %v: exit %d, %s", args, code, errOut)
		}
		var es []jobs.AuditEntry
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var e jobs.AuditEntry
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			es = append(es, e)
		}
		return es
	}
	all := lines()
	if len(all) != 4 || all[0].Actor != "ann" || all[2].Action != "pause" || all[2].Actor != "ops" || all[3].Action != "resume" || !strings.Contains(all[3].Result, "resumed repository o/r") {
		t.Fatalf("export: %+v", all)
	}
	if es := lines("--since", "24h", "--repo", "O/R"); len(es) != 2 || es[0].Action != "pause" {
		t.Errorf("--since 24h --repo O/R: %+v, want the pause and the resume", es)
	}
	if es := lines("--since", old.Time.Add(-time.Minute).Format(time.RFC3339), "--repo", "x/y"); len(es) != 1 || es[0].Actor != "bob" {
		t.Errorf("--since TIME --repo x/y: %+v", es)
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--since", "-5h"}, {"--repo", "nope"}} {
		if code, _, errOut := operatorRun(t, append([]string{"audit", "export"}, bad...)...); code != 1 || errOut == "" {
			t.Errorf("audit export %v: exit %d, %q; want a usage error", bad, code, errOut)
		}
	}
}
