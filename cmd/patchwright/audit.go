package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/patchwright/patchwright/jobs"
)

// optDuration parses an optional positive duration setting; "" is 0 (the
// default).
func optDuration(env, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive duration such as 720h", env, s)
	}
	return d, nil
}

// runAudit is `patchwright audit export`: the audit log as JSON lines on
// stdout, oldest first.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: patchwright audit export [--since 24h|2026-12-01T00:00:00Z] [--repo OWNER/NAME]")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 1
	}
	o := newOperatorFlags("audit export", "audit export [--since DURATION|TIME] [--repo OWNER/NAME]", stderr)
	since := o.fs.String("since", "", "only entries this recent: a duration back from now (24h) or an RFC 3339 time")
	repo := o.fs.String("repo", "", "only entries of this repository (OWNER/NAME)")
	return operatorCommand(ctx, o, args[1:], stderr, func(ctx context.Context, q *jobs.Queue) error {
		f, err := auditFilter(*since, *repo, time.Now())
		if err != nil {
			return errUsage{err}
		}
		enc := json.NewEncoder(stdout)
		return q.AuditExport(ctx, f, func(e jobs.AuditEntry) error { return enc.Encode(e) })
	})
}

// auditFilter reads --since and --repo.
func auditFilter(since, repo string, now time.Time) (jobs.AuditFilter, error) {
	f := jobs.AuditFilter{Repo: repo}
	if repo != "" {
		if _, err := jobs.ParseScope(0, repo); err != nil {
			return f, err
		}
	}
	switch {
	case since == "":
	case strings.ContainsAny(since, "T-:"):
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return f, fmt.Errorf("--since %q: want a duration (24h) or an RFC 3339 time", since)
		}
		f.Since = t
	default:
		d, err := time.ParseDuration(since)
		if err != nil || d <= 0 {
			return f, fmt.Errorf("--since %q: want a duration (24h) or an RFC 3339 time", since)
		}
		f.Since = now.Add(-d)
	}
	return f, nil
}
