package sandbox

import (
	"fmt"
	"regexp"
)

// Rule refuses every command whose script matches Pattern, for Reason.
type Rule struct {
	// Pattern is matched anywhere in the script (RE2 syntax).
	Pattern *regexp.Regexp
	// Reason is shown to the model: say what to do instead.
	Reason string
}

// Policy is a deny list checked before a command runs.
//
// It is a courtesy, not the boundary: a determined command can always spell
// a refused action in a way no regular expression foresees (a script file,
// base64, a variable). What contains a command is the container: no
// network in the agent phase, no credentials, no capabilities. The policy
// only tells the model early, and clearly, that something will not be done.
type Policy struct {
	Deny []Rule
}

// DeniedError is returned by Exec for a command the policy refuses. Callers
// map it to the tool error code command_denied.
type DeniedError struct {
	Command string
	Reason  string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("command denied: %s", e.Reason)
}

// Check returns a *DeniedError for the first rule script matches, or nil.
// A nil Policy allows everything.
func (p *Policy) Check(script string) error {
	if p == nil {
		return nil
	}
	for _, r := range p.Deny {
		if r.Pattern.MatchString(script) {
			return &DeniedError{Command: script, Reason: r.Reason}
		}
	}
	return nil
}

// cmdStart matches where a shell command word can begin: the start of a
// line, after a separator or pipe, inside $( or a backquote, or after a
// leading env/exec/sudo-like word. It keeps "docker" in a file name such as
// docker-compose.yml from being read as the docker command.
const cmdStart = `(?:^|[;&|(\x60\n]|\$\()\s*(?:(?:env|exec|command|nohup|time)\s+)*`

// DefaultPolicy returns the deny list used when DockerOptions.Policy is nil:
// pushing with git, piping a download into a shell, sudo/su, the docker
// command, and rm -rf of the root or home directory.
func DefaultPolicy() *Policy {
	return &Policy{Deny: []Rule{
		{
			Pattern: regexp.MustCompile(cmdStart + `git\b[^;&|\n]*\spush\b`),
			Reason:  "git push is not allowed: Patchwright pushes the branch itself after verification",
		},
		{
			Pattern: regexp.MustCompile(`\b(?:curl|wget)\b[^;&\n]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:/\S*/)?(?:ba|da|z|k|c|tc|fi)?sh\b`),
			Reason:  "piping a download into a shell is not allowed: download the file, inspect it, then run it",
		},
		{
			Pattern: regexp.MustCompile(cmdStart + `(?:sudo|su|doas)(?:\s|$)`),
			Reason:  "sudo/su are not available: commands run as an unprivileged user",
		},
		{
			Pattern: regexp.MustCompile(cmdStart + `(?:/\S*/)?docker(?:-compose)?(?:\s|$)`),
			Reason:  "docker is not available inside the sandbox",
		},
		{
			Pattern: regexp.MustCompile(`\brm\s+(?:-\S*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S*\s+)*(?:--\s+)?(?:/|/\*|~|~/|~/\*|\$HOME|\$HOME/|\$HOME/\*|\$\{HOME\}/?)(?:[\s;&|)]|$)`),
			Reason:  "recursive removal of / or the home directory is not allowed",
		},
	}}
}
