// Command patchwright is the one binary of Patchwright: the webhook
// receiver, the queue worker and the local runner (docs/design.md §4.1).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: patchwright COMMAND [flags]

commands:
  serve     webhook receiver at POST /webhook, /healthz, /readyz
            (without PATCHWRIGHT_REDIS_URL also the worker, on an in-process queue)
  worker    queue worker (needs PATCHWRIGHT_REDIS_URL)
  run       one issue against a local git repository, no GitHub and no Redis:
            patchwright run --repo PATH --issue-file ISSUE.md --model openai:gpt-4.1
  eval      a task suite, scored with confidence intervals:
            patchwright eval --tasks testdata/eval/tasks --model openai:gpt-4.1 --out OUT
            patchwright eval compare A/eval.json B/eval.json
  pause     hold every job (or --installation ID, --repo OWNER/NAME's): new ones wait,
            running ones stop at their next step and push a draft
  resume    lift a pause (same flags); held jobs start
  paused    list the pauses in force
  audit     audit export [--since 24h] [--repo OWNER/NAME]: the audit log as JSON lines
  version   print the version, the commit and the build date (also --version)

Run "patchwright COMMAND -h" for a command's flags.
`

// run dispatches a subcommand and returns the process exit status:
// 0 success, 1 bad usage or configuration, 2 infrastructure failure.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 1
	}
	switch args[0] {
	case "version", "--version", "-version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "patchwright version: takes no arguments, got %q\n", args[1:])
			return 1
		}
		currentBuild().print(stdout)
		return 0
	case "serve", "worker":
		return runService(ctx, args[0], args[1:], stderr)
	case "run":
		return runLocal(ctx, args[1:], stdout, stderr)
	case "eval":
		return runEval(ctx, args[1:], stdout, stderr)
	case "pause", "resume":
		return runPause(ctx, args[0], args[1:], stdout, stderr)
	case "paused":
		return runPaused(ctx, args[1:], stdout, stderr)
	case "audit":
		return runAudit(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "patchwright: unknown command %q\n%s", args[0], usage)
		return 1
	}
}

// runService runs serve or worker with the process's exit status.
func runService(ctx context.Context, command string, args []string, stderr io.Writer) int {
	cfg, err := parseConfig(command, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "patchwright %s: %v\n", command, err)
		return 1
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("command", command)
	if command == "worker" {
		err = work(ctx, cfg, log)
	} else {
		var ln net.Listener
		if ln, err = net.Listen("tcp", cfg.listen); err != nil {
			err = errInfra{fmt.Errorf("listen on %s: %w", cfg.listen, err)}
		} else {
			err = serve(ctx, cfg, log, ln)
		}
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "patchwright %s: %v\n", command, err)
	if errors.As(err, new(errInfra)) {
		return 2
	}
	return 1
}
