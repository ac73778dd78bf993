// Command patchwright is the one binary of Patchwright: the webhook
// receiver, the queue worker and the local runner (DESIGN §4.1).
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: patchwright COMMAND [flags]

commands:
  version   print the version
`

// run dispatches a subcommand and returns the process exit status:
// 0 success, 1 bad usage or configuration, 2 infrastructure failure.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 1
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "patchwright", version)
		return 0
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "patchwright: unknown command %q\n%s", args[0], usage)
		return 1
	}
}
