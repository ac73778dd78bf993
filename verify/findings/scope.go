package findings

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// scopeFindings reports a change over the size limits, and the files it
// touches that nothing connects to the issue.
func scopeFindings(in Input) []Finding {
	var out []Finding
	if n := len(in.Files); in.Limits.MaxChangedFiles > 0 && n > in.Limits.MaxChangedFiles {
		out = append(out, Finding{Kind: Scope, Detail: fmt.Sprintf(
			"The change touches %d files, more than the %d of limits.max_changed_files, so it may do more than the issue asked and is hard to review in one sitting.",
			n, in.Limits.MaxChangedFiles)})
	}
	if in.Limits.MaxChangedLines > 0 {
		lines := 0
		for _, f := range in.Files {
			lines += changedLines(f)
		}
		if lines > in.Limits.MaxChangedLines {
			out = append(out, Finding{Kind: Scope, Detail: fmt.Sprintf(
				"The change adds and removes %d lines, more than the %d of limits.max_changed_lines, so it may do more than the issue asked and is hard to review in one sitting.",
				lines, in.Limits.MaxChangedLines)})
		}
	}
	return append(out, unrelatedFindings(in)...)
}

// unrelatedFindings lists changed files that the model never read, that
// sit in no folder it read from, that are no test or subject of a file it
// read, and that the issue does not name.
func unrelatedFindings(in Input) []Finding {
	issue := strings.ToLower(in.IssueTitle + "\n" + in.IssueBody)
	readDirs, readStems := map[string]bool{}, map[string]bool{}
	for _, r := range in.Read {
		r = path.Clean(strings.TrimPrefix(r, "/workspace/"))
		readDirs[path.Dir(r)] = true
		readStems[subjectStem(r)] = true
	}
	var out []Finding
	extra := 0
	for _, f := range in.Files {
		if depFileOf(f.Path) != nil || readDirs[path.Dir(f.Path)] || readStems[subjectStem(f.Path)] || namedIn(issue, f.Path) {
			continue
		}
		if len(out) == maxPerFile {
			extra++
			continue
		}
		how := "changed"
		switch {
		case f.Base == nil:
			how = "was added"
		case f.New == nil && !f.Unread:
			how = "was deleted"
		}
		out = append(out, Finding{Kind: Scope, Path: f.Path, Line: firstChange(f), Detail: fmt.Sprintf(
			"%s %s although the model read nothing in its folder and the issue does not name it, so check that it belongs in this change.", f.Path, how)})
	}
	if extra > 0 {
		out = append(out, Finding{Kind: Scope, Detail: fmt.Sprintf(
			"%d more changed files are unrelated to what the model read and to the issue; check each belongs in this change.", extra)})
	}
	return out
}

// testAffix strips the test naming conventions of our runners from a
// file's stem, so tests/test_parser.py and src/parser.py share "parser".
var testAffix = regexp.MustCompile(`^test_|_test$|\.(test|spec)$|Tests?$|IT$`)

func subjectStem(p string) string {
	stem := strings.TrimSuffix(path.Base(p), path.Ext(p))
	if s := testAffix.ReplaceAllString(stem, ""); s != "" {
		stem = s
	}
	return strings.ToLower(stem)
}

// genericDirs are folder names too common to connect an issue to a file.
var genericDirs = map[string]bool{"src": true, "lib": true, "pkg": true, "internal": true, "cmd": true, "app": true, "test": true, "tests": true, "main": true, "java": true, "com": true, "org": true, "docs": true}

// namedIn reports whether issue text (lower case) names a path, its file
// name, its stem or its folder, as whole words.
func namedIn(issue, p string) bool {
	lp := strings.ToLower(p)
	words := []string{lp, path.Base(lp), subjectStem(lp)}
	if d := path.Base(path.Dir(lp)); d != "." && !genericDirs[d] {
		words = append(words, d)
	}
	for _, w := range words {
		if len(w) >= 3 && regexp.MustCompile(`(^|[^\w-])`+regexp.QuoteMeta(w)+`($|[^\w-])`).MatchString(issue) {
			return true
		}
	}
	return false
}
