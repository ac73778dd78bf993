// Package codeowners reads a CODEOWNERS file as GitHub does: one rule a
// line, a gitignore-style pattern then owners (@user, @org/team or an
// e-mail address), and for each path the last rule that matches wins.
// GitHub supports no `!` negation and no `[ ]` ranges, so neither does
// this; such a rule never matches.
package codeowners

import (
	"regexp"
	"strings"
)

// Paths are where GitHub looks for the file, in its order: the first
// found is the only one read.
var Paths = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// Rules are a file's rules in file order.
type Rules []rule

type rule struct {
	re     *regexp.Regexp
	owners []string
}

// Parse reads the rules of text. Comments, blank lines and lines whose
// pattern cannot match are left out; a pattern with no owners stays,
// since as the last match it leaves a path without owners.
func Parse(text string) Rules {
	var out Rules
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(strings.TrimSpace(line))
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		pattern := strings.ReplaceAll(fields[0], `\#`, "#")
		var owners []string
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "#") {
				break // the rest of the line is a comment
			}
			owners = append(owners, f)
		}
		if re := compile(pattern); re != nil {
			out = append(out, rule{re: re, owners: owners})
		}
	}
	return out
}

// compile turns a gitignore-style pattern into a regular expression over
// slash-separated paths; nil for one GitHub does not support.
func compile(p string) *regexp.Regexp {
	if strings.HasPrefix(p, "!") || strings.ContainsAny(p, "[]") {
		return nil
	}
	// A pattern that ends in "/*" names the files right in a folder, not
	// those deeper; any other also matches everything beneath what it
	// names.
	beneath := !strings.HasSuffix(p, "/*")
	trimmed := strings.TrimSuffix(p, "/")
	// A slash anywhere but at the end anchors the pattern to the root;
	// without one it matches at any depth.
	anchored := strings.Contains(trimmed, "/")
	trimmed = strings.TrimPrefix(trimmed, "/")
	if trimmed == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(trimmed); i++ {
		switch c := trimmed[i]; {
		case strings.HasPrefix(trimmed[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(trimmed[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if beneath {
		b.WriteString("(?:/.*)?")
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Owners are the owners of path: those of the last rule that matches it,
// none when no rule does.
func (rs Rules) Owners(path string) []string {
	path = strings.TrimPrefix(path, "/")
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].re.MatchString(path) {
			return rs[i].owners
		}
	}
	return nil
}

// Reviewers are the owners of paths that GitHub can be asked to review,
// each once in first-seen order: users by login, and teams by slug (of
// @org/slug). E-mail owners are left out: a review request takes logins.
func (rs Rules) Reviewers(paths []string) (users, teams []string) {
	seen := map[string]bool{}
	for _, p := range paths {
		for _, o := range rs.Owners(p) {
			name, ok := strings.CutPrefix(o, "@")
			key := strings.ToLower(name)
			if !ok || seen[key] {
				continue
			}
			seen[key] = true
			if _, slug, isTeam := strings.Cut(name, "/"); isTeam {
				teams = append(teams, slug)
			} else {
				users = append(users, name)
			}
		}
	}
	return users, teams
}
