package webhook

import (
	"fmt"
	"regexp"
	"strings"
)

// Command is a comment command.
type Command int

// Comment commands.
const (
	// NoCommand is the zero value: the comment asks nothing of Patchwright.
	NoCommand Command = iota
	// CommandRetry is `/agent retry [instructions]`.
	CommandRetry
	// CommandStop is `/agent stop`.
	CommandStop
	// CommandHelp is `/agent help`.
	CommandHelp
	// CommandNote is `/agent note TEXT`: a message for the running
	// attempt's model, delivered at its next step.
	CommandNote
	// CommandPlan is `/agent plan [changes]`: a read-only run posts a
	// plan on the issue and changes nothing.
	CommandPlan
	// CommandApprove is `/agent approve [notes]`: an attempt follows the
	// issue's latest plan, with the notes.
	CommandApprove
	// CommandRebase is `/agent rebase` on a pull request: merge its base
	// branch in and check it again.
	CommandRebase
)

func (c Command) String() string {
	switch c {
	case CommandRetry:
		return "retry"
	case CommandStop:
		return "stop"
	case CommandHelp:
		return "help"
	case CommandNote:
		return "note"
	case CommandPlan:
		return "plan"
	case CommandApprove:
		return "approve"
	case CommandRebase:
		return "rebase"
	}
	return "none"
}

// MaxInstructions caps the free text of `/agent retry`, in bytes.
const MaxInstructions = 4000

// HelpText is the answer to `/agent help` and to an unknown subcommand.
const HelpText = "Patchwright commands (one per comment, at the start of a line; write, maintain or admin permission needed):\n\n" +
	"- `/agent retry [instructions]`: try again; text after `retry`, and the lines below it, are passed to the model as your instructions.\n" +
	"- `/agent stop`: cancel the running attempt.\n" +
	"- `/agent plan [changes]` (on an issue): post a plan (files, approach, verification, risks) from a run that only reads the code; nothing is changed or pushed. While that plan waits for approval, `/agent retry [changes]` on the issue asks for a revised plan instead of an attempt.\n" +
	"- `/agent approve [notes]` (on an issue): start an attempt that follows the latest plan, with your notes.\n" +
	"- `/agent rebase` (on a pull request): merge its base branch into it and run the checks again.\n" +
	"- `/agent note TEXT`: while an attempt runs, pass TEXT (and the lines below it) to the model at its next step.\n" +
	"- `/agent help`: this message."

// ParseResult is what a comment body asks for: a Command (with Instructions
// for retry), a Reply to post without doing anything else, or nothing at all
// (Ignore).
type ParseResult struct {
	Command      Command
	Instructions string
	Reply        string
}

// Ignore reports whether the comment asks nothing of Patchwright.
func (r ParseResult) Ignore() bool { return r.Command == NoCommand && r.Reply == "" }

// commandLine matches a command line: "/agent" as the first word of a line,
// optionally indented, then a subcommand word and the rest of the line.
var commandLine = regexp.MustCompile(`(?i)^[ \t]*/agent(?:[ \t]+(\S+)(?:[ \t]+(.*))?)?[ \t]*$`)

// ParseComment reads a comment body. Grammar:
//
//	comment  = { line } ;
//	command  = [ indent ] "/agent" ( ws "retry" [ ws text ] | ws "plan" [ ws text ] | ws "approve" [ ws text ] | ws "note" ws text | ws "stop" [ ws text ] | ws "rebase" [ ws text ] | ws "help" [ ws text ] ) ;
//
// Rules:
//   - The command must start its line (after spaces or tabs): a quoted line
//     ("> /agent retry"), a line with text before it ("please /agent retry")
//     and lines inside ``` or ~~~ code fences never count.
//   - "/agent" and the subcommand are case-insensitive; "/agentfoo" is not a
//     command.
//   - Only the first command line counts.
//   - retry: the rest of its line and every line after it, trimmed, are the
//     instructions (empty is fine); more than MaxInstructions bytes gets a
//     Reply instead.
//   - note: like retry, the rest of its line and the lines after it are
//     the text; empty or more than MaxInstructions bytes gets a Reply.
//   - plan: like retry, the rest is the changes asked for the plan.
//   - stop, rebase and help ignore text after them.
//   - "/agent" alone or with an unknown subcommand gets a Reply with HelpText.
//
// Examples:
//
//	"/agent retry"                          → retry, no instructions
//	"/agent retry please also update docs"  → retry, "please also update docs"
//	"LGTM but\n/agent stop"                 → stop
//	"/agent note use the v2 API"            → note, "use the v2 API"
//	"> /agent retry"                        → ignore
//	"/agent deploy"                         → reply (help)
func ParseComment(body string) ParseResult {
	lines, live := liveLines(body)
	for _, i := range live {
		m := commandLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		switch strings.ToLower(m[1]) {
		case "retry":
			return retry(m[2], lines[i+1:])
		case "note":
			return note(m[2], lines[i+1:])
		case "plan":
			return plan(m[2], lines[i+1:])
		case "approve":
			return approve(m[2], lines[i+1:])
		case "stop":
			return ParseResult{Command: CommandStop}
		case "rebase":
			return ParseResult{Command: CommandRebase}
		case "help":
			return ParseResult{Command: CommandHelp}
		case "":
			return ParseResult{Reply: "`/agent` needs a command.\n\n" + HelpText}
		default:
			return ParseResult{Reply: fmt.Sprintf("Unknown command `/agent %s`.\n\n%s", m[1], HelpText)}
		}
	}
	return ParseResult{}
}

// liveLines is body's lines and, in order, the indexes of those outside
// code fences: the lines a command or a mention may stand on. Quotes are
// left to the readers' patterns, which anchor at the line's start.
func liveLines(body string) (lines []string, live []int) {
	lines = strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	inFence := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence {
			live = append(live, i)
		}
	}
	return lines, live
}

func retry(rest string, after []string) ParseResult {
	text := strings.TrimSpace(rest + "\n" + strings.Join(after, "\n"))
	if len(text) > MaxInstructions {
		return ParseResult{Reply: fmt.Sprintf("The instructions after `/agent retry` are %d bytes long; the limit is %d. Please shorten them.", len(text), MaxInstructions)}
	}
	return ParseResult{Command: CommandRetry, Instructions: text}
}

// plan is `/agent plan`: like retry, the rest is the requester's changes
// for the plan (empty is fine).
func plan(rest string, after []string) ParseResult {
	text := strings.TrimSpace(rest + "\n" + strings.Join(after, "\n"))
	if len(text) > MaxInstructions {
		return ParseResult{Reply: fmt.Sprintf("The text after `/agent plan` is %d bytes long; the limit is %d. Please shorten it.", len(text), MaxInstructions)}
	}
	return ParseResult{Command: CommandPlan, Instructions: text}
}

// approve is `/agent approve`: the rest is the approver's notes for the
// attempt (empty is fine).
func approve(rest string, after []string) ParseResult {
	text := strings.TrimSpace(rest + "\n" + strings.Join(after, "\n"))
	if len(text) > MaxInstructions {
		return ParseResult{Reply: fmt.Sprintf("The notes after `/agent approve` are %d bytes long; the limit is %d. Please shorten them.", len(text), MaxInstructions)}
	}
	return ParseResult{Command: CommandApprove, Instructions: text}
}

func note(rest string, after []string) ParseResult {
	text := strings.TrimSpace(rest + "\n" + strings.Join(after, "\n"))
	switch {
	case text == "":
		return ParseResult{Reply: "`/agent note` needs the text to pass on, for example `/agent note use the v2 client`."}
	case len(text) > MaxInstructions:
		return ParseResult{Reply: fmt.Sprintf("The note after `/agent note` is %d bytes long; the limit is %d. Please shorten it.", len(text), MaxInstructions)}
	}
	return ParseResult{Command: CommandNote, Instructions: text}
}
