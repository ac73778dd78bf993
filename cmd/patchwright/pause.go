package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/redisconn"
)

// operatorFlags are the flags of the operator's commands (pause, resume,
// paused, audit): where Redis is and who the operator is.
type operatorFlags struct {
	fs                   *flag.FlagSet
	redisURL, caFile, by string
	// retention is the audit log's, for the entries the command appends:
	// serve's trims by it too, so they must agree.
	retention time.Duration
}

func newOperatorFlags(name, synopsis string, stderr io.Writer) *operatorFlags {
	o := &operatorFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	o.fs.SetOutput(stderr)
	o.fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: patchwright %s\n\nflags:\n", synopsis)
		o.fs.PrintDefaults()
	}
	o.fs.StringVar(&o.redisURL, "redis-url", os.Getenv("PATCHWRIGHT_REDIS_URL"), "Redis address the workers use [PATCHWRIGHT_REDIS_URL]")
	o.fs.StringVar(&o.caFile, "redis-ca-file", os.Getenv("PATCHWRIGHT_REDIS_CA_FILE"), "PEM file of CA certificates for a rediss address [PATCHWRIGHT_REDIS_CA_FILE]")
	o.fs.StringVar(&o.by, "by", os.Getenv("USER"), "who is acting, for the audit log [USER]")
	o.fs.Func("audit-retention", "how long audit entries stay, as serve's setting [PATCHWRIGHT_AUDIT_RETENTION]", func(s string) (err error) {
		o.retention, err = optDuration("--audit-retention", s)
		return err
	})
	return o
}

// open connects to Redis; the command fails without an address (an
// embedded queue is in one process only: nothing to pause from outside).
func (o *operatorFlags) open() (redis.UniversalClient, error) {
	if o.redisURL == "" {
		return nil, errors.New("needs PATCHWRIGHT_REDIS_URL (--redis-url): the queue the workers share")
	}
	var ca []byte
	if o.caFile != "" {
		b, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, err
		}
		ca = b
	}
	return redisconn.Open(o.redisURL, redisconn.TLS{CAPEM: ca})
}

// operatorCommand parses args and runs fn with the queue; exit status as
// run's.
func operatorCommand(ctx context.Context, o *operatorFlags, args []string, stderr io.Writer, fn func(context.Context, *jobs.Queue) error) int {
	if r, err := optDuration("PATCHWRIGHT_AUDIT_RETENTION", os.Getenv("PATCHWRIGHT_AUDIT_RETENTION")); err == nil {
		o.retention = r // a flag given overrides it
	}
	if err := o.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 1
	}
	if o.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "patchwright %s: unexpected arguments %q\n", o.fs.Name(), o.fs.Args())
		return 1
	}
	rdb, err := o.open()
	if err != nil {
		fmt.Fprintf(stderr, "patchwright %s: %v\n", o.fs.Name(), err)
		return 1
	}
	defer rdb.Close()
	if err := fn(ctx, jobs.NewQueue(rdb)); err != nil {
		fmt.Fprintf(stderr, "patchwright %s: %v\n", o.fs.Name(), err)
		if errors.As(err, new(errUsage)) {
			return 1
		}
		return 2
	}
	return 0
}

// errUsage is a command's bad input (exit 1, not 2).
type errUsage struct{ error }

// runPause is `patchwright pause` and `resume`: scope flags, then the
// change, said on stdout.
func runPause(ctx context.Context, command string, args []string, stdout, stderr io.Writer) int {
	o := newOperatorFlags(command, command+" [--installation ID | --repo OWNER/NAME]", stderr)
	inst := o.fs.Int64("installation", 0, "pause only this installation")
	repo := o.fs.String("repo", "", "pause only this repository")
	return operatorCommand(ctx, o, args, stderr, func(ctx context.Context, q *jobs.Queue) error {
		scope, err := jobs.ParseScope(*inst, *repo)
		if err != nil {
			return errUsage{err}
		}
		if o.by == "" {
			return errUsage{errors.New("needs --by (or USER): who is acting, for the audit log")}
		}
		var result string
		if command == "resume" {
			result, err = resume(ctx, q, scope)
		} else {
			result, err = pause(ctx, q, scope, o.by)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, result)
		return q.Audit(ctx, jobs.AuditEntry{Actor: o.by, Action: command, Scope: scope.String(), Repo: scope.Repo,
			Installation: scope.Installation, Result: result}, o.retention)
	})
}

func pause(ctx context.Context, q *jobs.Queue, scope jobs.Scope, by string) (string, error) {
	p, set, err := q.Pause(ctx, scope, by)
	if err != nil {
		return "", err
	}
	if !set {
		return fmt.Sprintf("%s was already paused by %s at %s", p.Scope, p.By, p.At.Format(time.RFC3339)), nil
	}
	return fmt.Sprintf("paused %s: new jobs are held, running ones stop at their next step and push a draft", scope), nil
}

func resume(ctx context.Context, q *jobs.Queue, scope jobs.Scope) (string, error) {
	lifted, err := q.Resume(ctx, scope)
	if err != nil {
		return "", err
	}
	if !lifted {
		return fmt.Sprintf("%s was not paused (a wider pause may still hold it: see `patchwright paused`)", scope), nil
	}
	return fmt.Sprintf("resumed %s: held jobs start within seconds", scope), nil
}

// runPaused is `patchwright paused`: the pauses in force, one a line.
func runPaused(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := newOperatorFlags("paused", "paused", stderr)
	return operatorCommand(ctx, o, args, stderr, func(ctx context.Context, q *jobs.Queue) error {
		ps, err := q.Pauses(ctx)
		if err != nil {
			return err
		}
		if len(ps) == 0 {
			fmt.Fprintln(stdout, "nothing is paused")
		}
		for _, p := range ps {
			fmt.Fprintf(stdout, "%s\tpaused by %s at %s\n", p.Scope, p.By, p.At.Format(time.RFC3339))
		}
		return nil
	})
}
