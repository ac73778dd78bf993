package webhook

import (
	"fmt"
	"regexp"
	"strings"
)

// Mentions: `@<app-slug> <instruction>` in a comment, by a writer, asks
// for work as `/agent retry <instruction>` does: on an issue it starts a
// run (no label needed; the instruction is added to the task), on the
// app's pull request it is a retry with that feedback. A stranger's
// mention is refused as a stranger's command is (refuseStranger).

// ParseMention reads a comment for a mention of the app by its slug: the
// first line, outside code fences and quotes, that starts with "@slug"
// (case-insensitive, a whole name: "@slug-bot" is someone else). The rest
// of that line and the lines below it, trimmed, are the instruction, as
// for `/agent retry`. A comment with an `/agent` command is that command,
// not a mention (onIssueComment reads the command first).
func ParseMention(body, slug string) ParseResult {
	// Most comments name nobody: they cost a search, not a regexp.
	if slug == "" || !strings.Contains(strings.ToLower(body), "@"+strings.ToLower(slug)) {
		return ParseResult{}
	}
	line := regexp.MustCompile(`(?i)^[ \t]*@` + regexp.QuoteMeta(slug) + `(?:[ \t,:]+(.*))?[ \t]*$`)
	lines, live := liveLines(body)
	for _, i := range live {
		m := line.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		text := strings.TrimSpace(m[1] + "\n" + strings.Join(lines[i+1:], "\n"))
		if len(text) > MaxInstructions {
			return ParseResult{Reply: fmt.Sprintf("The instruction after @%s is %d bytes long; the limit is %d. Please shorten it.", slug, len(text), MaxInstructions)}
		}
		return ParseResult{Command: CommandRetry, Instructions: text}
	}
	return ParseResult{}
}
