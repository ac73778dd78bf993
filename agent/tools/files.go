package tools

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/sandbox"
)

// ListFilesParams are the parameters of list_files.
type ListFilesParams struct {
	Path    string `json:"path,omitempty" jsonschema_description:"Directory to list, relative to the repository root. Default: the whole repository."`
	Pattern string `json:"pattern,omitempty" jsonschema_description:"Doublestar glob on paths relative to path, for example **/*_test.go. Without a slash it matches file names at any depth."`
}

func (s *Set) listFiles(ctx context.Context, p ListFilesParams) (Result, error) {
	start, res, ok := s.clean(p.Path)
	if !ok {
		return res, nil
	}
	glob, ok := newGlobMatcher(p.Pattern)
	if !ok {
		return fail(InvalidArguments, fmt.Sprintf("pattern %q is not a valid glob", p.Pattern),
			"use a doublestar glob such as **/*.go or cmd/*/main.go"), nil
	}
	if res, err := s.checkStart(start); err != nil || res.Code != "" {
		return res, err
	}
	var (
		b     strings.Builder
		shown int
		total int
	)
	err := walkFiles(ctx, s.fs, start, glob, func(rel string, _ fs.DirEntry) error {
		total++
		if shown < s.limits.MaxListFiles {
			shown++
			b.WriteString(rel)
			b.WriteByte('\n')
		}
		return nil
	}, nil)
	if err != nil {
		return Result{}, fmt.Errorf("list %s: %w", start, err)
	}
	if total == 0 {
		return Result{Text: "no files match (files ignored by .gitignore, secret files, symbolic links and special files are not listed)"}, nil
	}
	if omitted := total - shown; omitted > 0 {
		fmt.Fprintf(&b, "[%d more files omitted; narrow the listing with path or pattern]\n", omitted)
	}
	return Result{Text: b.String()}, nil
}

// ReadFileParams are the parameters of read_file.
type ReadFileParams struct {
	Path      string `json:"path" jsonschema_description:"File to read, relative to the repository root."`
	StartLine int    `json:"start_line,omitempty" jsonschema:"minimum=1" jsonschema_description:"First line to show (1-based). Default 1."`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"minimum=1" jsonschema_description:"Last line to show, inclusive. Default: the end of the file."`
}

func (s *Set) readFile(ctx context.Context, p ReadFileParams) (Result, error) {
	if p.StartLine < 0 || p.EndLine < 0 || (p.EndLine > 0 && p.StartLine > p.EndLine) {
		return fail(InvalidArguments, fmt.Sprintf("invalid line range %d-%d", p.StartLine, p.EndLine),
			"give 1 <= start_line <= end_line, or leave both out"), nil
	}
	rel, res, ok := s.clean(p.Path)
	if !ok {
		return res, nil
	}
	data, res, err := s.readRegular(ctx, rel)
	if err != nil || res.Code != "" {
		return res, err
	}
	if sandbox.IsBinary(data) {
		return fail(InvalidArguments, fmt.Sprintf("%s is a binary file (%d bytes)", rel, len(data)),
			"binary files cannot be read or edited here; inspect them with run if needed"), nil
	}
	lines := splitLines(data)
	start, end := max(p.StartLine, 1), p.EndLine
	if end == 0 || end > len(lines) {
		end = len(lines)
	}
	if len(lines) > 0 && start > len(lines) {
		return fail(InvalidArguments, fmt.Sprintf("start_line %d is past the end of %s (%d lines)", start, rel, len(lines)),
			"choose start_line between 1 and "+strconv.Itoa(len(lines))), nil
	}
	if n := end - start + 1; n > s.limits.MaxReadLines || rangeBytes(lines[start-1:end]) > s.limits.MaxReadBytes {
		return fail(TooLarge, fmt.Sprintf("%s lines %d-%d is too much to show at once (%d lines, %d bytes in the file)", rel, start, end, len(lines), len(data)),
			fmt.Sprintf("read a range with start_line and end_line of at most %d lines, or use search to find the part you need", s.limits.MaxReadLines)), nil
	}
	// Scanned here, not only by the guard, so that a withheld file is not
	// recorded as read: the model never saw it, so it may not edit it.
	res, err = s.guard(ctx, "read_file", Result{Text: renderLines(rel, data, lines, start, end)}, locateRead(rel, start))
	if err != nil || res.Code != "" {
		return res, err
	}
	res.scanned = true
	// The whole file's version is recorded even for a range: edit checks
	// that the file did not change, and the model chose what to look at.
	s.reads.record(rel, data)
	return res, nil
}

// renderLines numbers lines start..end (1-based) under a header that says
// where in the file they are and what an edit must respect (CRLF, a
// missing final newline).
func renderLines(rel string, data []byte, lines []string, start, end int) string {
	var b strings.Builder
	if len(lines) == 0 {
		fmt.Fprintf(&b, "%s: empty file\n", rel)
		return b.String()
	}
	fmt.Fprintf(&b, "%s: lines %d-%d of %d", rel, start, end, len(lines))
	if bytes.Contains(data, []byte("\r\n")) {
		b.WriteString(" (CRLF line endings; edit may use plain newlines)")
	}
	b.WriteByte('\n')
	width := len(strconv.Itoa(end))
	for i := start; i <= end; i++ {
		fmt.Fprintf(&b, "%*d\t%s\n", width, i, strings.TrimSuffix(lines[i-1], "\r"))
	}
	if end == len(lines) && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteString("(no newline at end of file)\n")
	}
	return b.String()
}

// splitLines splits data into lines without their "\n"; a final newline
// does not start another line.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(data), "\n")
	return strings.Split(s, "\n")
}

func rangeBytes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}
