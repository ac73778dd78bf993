package gitrepo

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Paths git treats as its own. Git refuses, on checkout and in fsck, a
// path any component of which is its repository directory under another
// spelling (read-cache.c verify_path with core.protectNTFS and
// core.protectHFS): ".git" in any case; on NTFS with trailing spaces or
// dots, before an alternate data stream (".git::$INDEX_ALLOCATION") or as
// the 8.3 short name "GIT~1"; on HFS+ with characters HFS+ ignores
// (".g\u200cit"); and a symbolic link named .gitmodules (git reads it
// without following links) in those spellings. A commit holding one would
// write into the .git directory of whoever checks it out on such a file
// system, so the model's change may never hold one (ChangesWithin and
// Commit refuse it). Backslashes count as separators, as on Windows, and
// symbolic links named .gitattributes, .gitignore or .mailmap (which git
// fsck warns of) are refused too: no repository needs them.

// gitPathProblem says why git would refuse path p for a file (link for a
// symbolic link); "" when it would not.
func gitPathProblem(p string, link bool) string {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch {
		case part == "." || part == "..":
			return fmt.Sprintf("its component %q leaves the directory", part)
		case isDotGit(part):
			return fmt.Sprintf("its component %q is a spelling of .git", part)
		}
		if link {
			for _, name := range linkless {
				if isDotName(part, name) {
					return fmt.Sprintf("it is a symbolic link named %q, a spelling of .%s", part, name)
				}
			}
		}
	}
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") {
		return "it has an empty component"
	}
	return ""
}

// linkless are the dot files git reads from the work tree or its objects
// that may not be symbolic links.
var linkless = []string{"gitmodules", "gitattributes", "gitignore", "mailmap"}

// isDotGit reports whether a path component is .git on some file system.
func isDotGit(part string) bool {
	return isDotName(part, "git") || ntfsShortName(part, "git~1")
}

// isDotName reports whether part is "." + name (ASCII case ignored) with
// only what NTFS drops after it (spaces, dots, an alternate data stream)
// or with what HFS+ ignores anywhere (format characters such as U+200C).
// NTFS 8.3 short names of the longer ones (GITMOD~1, gi7eba~1) are
// matched too.
func isDotName(part, name string) bool {
	folded := strings.ToLower(dropFormat(part))
	if rest, ok := strings.CutPrefix(folded, "."+name); ok && ntfsTail(rest) {
		return true
	}
	if name == "git" || len(name) < 6 {
		return false
	}
	short := map[string]string{"gitmodules": "gi7eba", "gitattributes": "gi7d29", "gitignore": "gi250a"}[name]
	return ntfsShortName(part, name[:6]+"~") || (short != "" && ntfsShortName(part, short+"~"))
}

// ntfsShortName reports whether part is prefix (ASCII case ignored),
// digits when prefix ends in "~", then an NTFS tail.
func ntfsShortName(part, prefix string) bool {
	rest, ok := strings.CutPrefix(strings.ToLower(part), prefix)
	if !ok {
		return false
	}
	if strings.HasSuffix(prefix, "~") {
		n := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		if n == 0 {
			return false
		}
		rest = rest[n:]
	}
	return ntfsTail(rest)
}

// ntfsTail reports whether rest is what NTFS ignores after a name:
// spaces and dots, then nothing or an alternate data stream (":…").
func ntfsTail(rest string) bool {
	rest = strings.TrimLeft(rest, " .")
	return rest == "" || rest[0] == ':'
}

// dropFormat removes the characters HFS+ ignores when it compares names
// (git's next_hfs_char lists U+200C-U+200F, U+202A-U+202E, U+206A-U+206F
// and U+FEFF): every format character, to be safe. Invalid UTF-8 is kept.
func dropFormat(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
}

// ErrGitPath is a change holding a path git treats as its own.
var ErrGitPath = errors.New("a path git treats as its own")

// checkGitPaths refuses changes, however made, that hold such a path.
func checkGitPaths(changes []Change) error {
	for _, c := range changes {
		if c.Kind == Deleted {
			continue
		}
		if why := gitPathProblem(c.Path, c.Symlink); why != "" {
			return fmt.Errorf("%w: %q: %s", ErrGitPath, c.Path, why)
		}
	}
	return nil
}
