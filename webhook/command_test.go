package webhook

import (
	"strings"
	"testing"
)

func TestParseComment(t *testing.T) {
	tests := map[string]struct {
		body         string
		command      Command
		instructions string
		reply        bool
	}{
		"retry":                 {body: "/agent retry", command: CommandRetry},
		"retry with text":       {body: "/agent retry please also update the docs", command: CommandRetry, instructions: "please also update the docs"},
		"retry multi-line":      {body: "/agent retry\nUse errors.Join.\nKeep the API.", command: CommandRetry, instructions: "Use errors.Join.\nKeep the API."},
		"retry crlf":            {body: "/agent retry fix it\r\n", command: CommandRetry, instructions: "fix it"},
		"retry uppercase":       {body: "/Agent RETRY", command: CommandRetry},
		"indented":              {body: "  /agent retry", command: CommandRetry},
		"after other lines":     {body: "Thanks!\n\n/agent stop", command: CommandStop},
		"stop":                  {body: "/agent stop", command: CommandStop},
		"stop with text":        {body: "/agent stop now please", command: CommandStop},
		"help":                  {body: "/agent help", command: CommandHelp},
		"note":                  {body: "/agent note use the v2 API", command: CommandNote, instructions: "use the v2 API"},
		"note multi-line":       {body: "/agent note\nUse errors.Join.\nKeep the API.", command: CommandNote, instructions: "Use errors.Join.\nKeep the API."},
		"note empty":            {body: "/agent note  ", reply: true},
		"note quoted":           {body: "> /agent note hi"},
		"plan":                  {body: "/agent plan", command: CommandPlan},
		"plan with changes":     {body: "/AGENT Plan keep the API\nand add a test", command: CommandPlan, instructions: "keep the API\nand add a test"},
		"plan quoted":           {body: "> /agent plan"},
		"plan in a fence":       {body: "```\n/agent plan\n```"},
		"plan too long":         {body: "/agent plan " + strings.Repeat("x", MaxInstructions+1), reply: true},
		"planner unknown":       {body: "/agent planner", reply: true},
		"approve":               {body: "/agent approve", command: CommandApprove},
		"approve with notes":    {body: "/agent approve use v2\nand a test", command: CommandApprove, instructions: "use v2\nand a test"},
		"approve too long":      {body: "/agent approve " + strings.Repeat("x", MaxInstructions+1), reply: true},
		"approved unknown":      {body: "/agent approved", reply: true},
		"note too long":         {body: "/agent note " + strings.Repeat("x", MaxInstructions+1), reply: true},
		"first command wins":    {body: "/agent stop\n/agent retry", command: CommandStop},
		"rebase":                {body: "/agent rebase", command: CommandRebase},
		"rebase ignores text":   {body: "/agent Rebase now please", command: CommandRebase},
		"quoted":                {body: "> /agent retry"},
		"quoted indented":       {body: "  > /agent retry"},
		"quoted then reply":     {body: "> /agent retry\nI disagree"},
		"mid-line":              {body: "please /agent retry"},
		"no space":              {body: "/agentretry"},
		"other prefix":          {body: "/agents retry"},
		"code fence":            {body: "```\n/agent retry\n```"},
		"tilde fence":           {body: "~~~\n/agent stop\n~~~"},
		"after fence":           {body: "```\nx\n```\n/agent stop", command: CommandStop},
		"empty":                 {body: ""},
		"plain text":            {body: "LGTM"},
		"bare":                  {body: "/agent", reply: true},
		"unknown":               {body: "/agent deploy prod", reply: true},
		"too long instructions": {body: "/agent retry " + strings.Repeat("x", MaxInstructions+1), reply: true},
		"max instructions":      {body: "/agent retry " + strings.Repeat("x", MaxInstructions), command: CommandRetry, instructions: strings.Repeat("x", MaxInstructions)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ParseComment(tc.body)
			if got.Command != tc.command {
				t.Errorf("command = %v, want %v", got.Command, tc.command)
			}
			if got.Instructions != tc.instructions {
				t.Errorf("instructions = %q, want %q", got.Instructions, tc.instructions)
			}
			if (got.Reply != "") != tc.reply {
				t.Errorf("reply = %q, want a reply: %v", got.Reply, tc.reply)
			}
			if tc.command == NoCommand && !tc.reply && !got.Ignore() {
				t.Errorf("Ignore() = false, want true")
			}
		})
	}
}
