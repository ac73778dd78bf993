package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// EditParams are the parameters of edit.
type EditParams struct {
	Edits []Edit `json:"edits" jsonschema:"minItems=1" jsonschema_description:"Replacements, applied in order; several may target the same file."`
}

// Edit replaces the one occurrence of OldText in Path with NewText.
type Edit struct {
	Path    string `json:"path" jsonschema_description:"File to change, relative to the repository root. It must have been read with read_file."`
	OldText string `json:"old_text" jsonschema_description:"Exact text to replace, copied from the file (without line numbers); it must occur exactly once."`
	NewText string `json:"new_text" jsonschema_description:"Replacement text; empty deletes old_text."`
}

// pendingFile is one file of an edit call: what it held, and what it will
// hold once every edit of the call has been applied in memory.
type pendingFile struct {
	rel        string
	orig, next []byte
}

func (s *Set) edit(ctx context.Context, p EditParams) (Result, error) {
	if len(p.Edits) == 0 {
		return fail(InvalidArguments, "edits is empty", "give at least one {path, old_text, new_text}"), nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()

	var files []*pendingFile
	byPath := make(map[string]*pendingFile)
	for i, e := range p.Edits {
		where := fmt.Sprintf("edit %d of %d", i+1, len(p.Edits))
		if e.OldText == "" {
			return fail(InvalidArguments, where+": old_text is empty",
				"copy the lines to change into old_text; to create a file use write_file"), nil
		}
		if e.OldText == e.NewText {
			return fail(InvalidArguments, where+": new_text equals old_text", "give the changed text in new_text"), nil
		}
		rel, res, ok := s.cleanWritable(e.Path)
		if !ok {
			return prefixed(res, where), nil
		}
		f := byPath[rel]
		if f == nil {
			data, res, err := s.readRegular(ctx, rel)
			if err != nil || res.Code != "" {
				return prefixed(res, where), err
			}
			if why := s.reads.check(rel, data); why != current {
				return prefixed(staleResult(rel, why), where), nil
			}
			f = &pendingFile{rel: rel, orig: data, next: data}
			byPath[rel] = f
			files = append(files, f)
		}
		next, res := replaceOnce(string(f.next), e.OldText, e.NewText, rel)
		if res.Code != "" {
			return prefixed(res, where), nil
		}
		f.next = []byte(next)
	}
	if res, err := s.writeAll(files); err != nil || res.Code != "" {
		return res, err
	}
	changed := make([]string, len(files))
	for i, f := range files {
		s.reads.record(f.rel, f.next)
		changed[i] = f.rel
	}
	return Result{
		Text:    fmt.Sprintf("applied %d edits to %s", len(p.Edits), strings.Join(changed, ", ")),
		Changed: changed,
	}, nil
}

// writeAll writes every file or, when a write fails, puts back the files
// already written so that the call changes nothing.
func (s *Set) writeAll(files []*pendingFile) (Result, error) {
	for i, f := range files {
		err := s.fs.WriteFile(f.rel, f.next)
		if err == nil {
			continue
		}
		for _, done := range files[:i+1] {
			// The failed file is restored too: a write can fail after
			// truncating it.
			if rerr := s.fs.WriteFile(done.rel, done.orig); rerr != nil {
				return Result{}, fmt.Errorf("write %s: %w; restoring %s also failed: %v", f.rel, err, done.rel, rerr)
			}
		}
		if res, ok := fileFailure(f.rel, err); ok {
			res.Text += "\nnothing was changed"
			return res, nil
		}
		return Result{}, fmt.Errorf("write %s (earlier files of the edit restored): %w", f.rel, err)
	}
	return Result{}, nil
}

// prefixed puts where ("edit 2 of 3") in front of a failure's message.
func prefixed(res Result, where string) Result {
	if res.Code == "" {
		return res
	}
	head := "error: " + string(res.Code) + ": "
	res.Text = head + where + ": " + strings.TrimPrefix(res.Text, head)
	return res
}

// replaceOnce replaces the single occurrence of old in content. In a file
// with CRLF line endings, text the model wrote with plain newlines is
// matched and inserted with CRLF, so the file keeps one line ending.
func replaceOnce(content, old, repl, rel string) (string, Result) {
	crlf := strings.Contains(content, "\r\n")
	if crlf && !strings.Contains(repl, "\r") {
		repl = strings.ReplaceAll(repl, "\n", "\r\n")
	}
	n := strings.Count(content, old)
	if n == 0 && crlf && !strings.Contains(old, "\r") {
		if alt := strings.ReplaceAll(old, "\n", "\r\n"); alt != old {
			old, n = alt, strings.Count(content, alt)
		}
	}
	switch {
	case n == 0:
		return "", fail(NoMatch, "old_text was not found in "+rel, noMatchHint(content, old))
	case n > 1:
		return "", fail(AmbiguousMatch, fmt.Sprintf("old_text occurs %d times in %s (at lines %s)", n, rel, occurrenceLines(content, old, 5)),
			"include more surrounding lines in old_text so that it occurs exactly once")
	}
	i := strings.Index(content, old)
	return content[:i] + repl + content[i+len(old):], Result{}
}

// occurrenceLines lists the line numbers of the first max occurrences.
func occurrenceLines(content, old string, limit int) string {
	var lines []string
	for at := 0; len(lines) < limit; {
		i := strings.Index(content[at:], old)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(content[:at+i], "\n")+1))
		at += i + len(old)
	}
	return strings.Join(lines, ", ")
}

// noMatchHint points the model at the likely cause: whitespace that
// differs, or the file line closest to the first line of old_text.
func noMatchHint(content, old string) string {
	fileLines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	oldLines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), "\n")
	if at := matchTrimmed(fileLines, oldLines); at > 0 {
		return fmt.Sprintf("lines %d-%d match old_text except for whitespace (indentation, tabs or trailing spaces); copy them exactly from read_file output",
			at, at+len(oldLines)-1)
	}
	first := ""
	for _, l := range oldLines {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if n, line := closestLine(fileLines, first); n > 0 {
		return fmt.Sprintf("the closest line to the first line of old_text is line %d: %q; read_file the file and copy old_text exactly", n, line)
	}
	return "read_file the file again and copy old_text exactly from it"
}

// matchTrimmed finds oldLines in fileLines comparing lines without their
// leading and trailing whitespace; it returns the 1-based line or 0.
func matchTrimmed(fileLines, oldLines []string) int {
	if len(oldLines) == 0 || len(oldLines) > len(fileLines) {
		return 0
	}
next:
	for i := 0; i+len(oldLines) <= len(fileLines); i++ {
		for j, ol := range oldLines {
			if strings.TrimSpace(fileLines[i+j]) != strings.TrimSpace(ol) {
				continue next
			}
		}
		return i + 1
	}
	return 0
}

// closestLine returns the 1-based number and text of the file line with
// the smallest edit distance to want, if it is reasonably close (at most
// half of want's length). Lines longer than closeLimit bytes are not
// compared, which keeps the cost bounded on minified files.
func closestLine(fileLines []string, want string) (int, string) {
	const closeLimit = 300
	if want == "" || len(want) > closeLimit {
		return 0, ""
	}
	best, bestN := len(want)/2+1, 0
	for i, l := range fileLines {
		t := strings.TrimSpace(l)
		if len(t) > closeLimit || abs(len(t)-len(want)) >= best {
			continue
		}
		if d := levenshtein(t, want, best); d < best {
			best, bestN = d, i+1
		}
	}
	if bestN == 0 {
		return 0, ""
	}
	return bestN, fileLines[bestN-1]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// levenshtein is the byte edit distance of a and b; it gives up early
// (returning bound) once every path costs at least bound.
func levenshtein(a, b string, bound int) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= bound {
			return bound
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// WriteFileParams are the parameters of write_file.
type WriteFileParams struct {
	Path    string `json:"path" jsonschema_description:"File to create, relative to the repository root; missing directories are created."`
	Content string `json:"content" jsonschema_description:"The complete content of the file."`
}

func (s *Set) writeFile(ctx context.Context, p WriteFileParams) (Result, error) {
	rel, res, ok := s.cleanWritable(p.Path)
	if !ok {
		return res, nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	verb := "created"
	_, err := s.fs.Stat(rel)
	switch {
	case err == nil:
		// Overwriting needs the model to know what it replaces.
		data, res, err := s.readRegular(ctx, rel)
		if err != nil || res.Code != "" {
			return res, err
		}
		if why := s.reads.check(rel, data); why != current {
			return staleResult(rel, why), nil
		}
		verb = "overwrote"
	case !errors.Is(err, fs.ErrNotExist):
		if res, ok := fileFailure(rel, err); ok {
			return res, nil
		}
		return Result{}, fmt.Errorf("write_file %s: %w", rel, err)
	}
	created, err := s.missingDirs(rel)
	if err != nil {
		if res, ok := fileFailure(rel, err); ok {
			return res, nil
		}
		return Result{}, fmt.Errorf("write_file %s: %w", rel, err)
	}
	if err := s.fs.WriteFile(rel, []byte(p.Content)); err != nil {
		if res, ok := fileFailure(rel, err); ok {
			return res, nil
		}
		return Result{}, fmt.Errorf("write_file %s: %w", rel, err)
	}
	if verb == "created" {
		created = append(created, rel)
	}
	if err := s.handOver(created); err != nil {
		return Result{}, fmt.Errorf("write_file %s: %w", rel, err)
	}
	s.reads.record(rel, []byte(p.Content))
	return Result{
		Text:    fmt.Sprintf("%s %s (%d bytes)", verb, rel, len(p.Content)),
		Changed: []string{rel},
	}, nil
}

// DeleteFileParams are the parameters of delete_file.
type DeleteFileParams struct {
	Path string `json:"path" jsonschema_description:"File to delete, relative to the repository root."`
}

func (s *Set) deleteFile(_ context.Context, p DeleteFileParams) (Result, error) {
	rel, res, ok := s.cleanWritable(p.Path)
	if !ok {
		return res, nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.fs.Remove(rel); err != nil {
		if res, ok := fileFailure(rel, err); ok {
			return res, nil
		}
		return Result{}, fmt.Errorf("delete_file %s: %w", rel, err)
	}
	s.reads.forget(rel)
	return Result{Text: "deleted " + rel, Changed: []string{rel}}, nil
}
