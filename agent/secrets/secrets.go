// Package secrets finds credentials in text with gitleaks' default rules,
// so that a diff carrying one is never committed or pushed and tool output
// carrying one never reaches the model (docs/design.md §5): agent/tools withholds
// such output with secret_detected.
//
// A Finding names the file, line and rule, never the secret itself: findings
// end up in logs, comments and pull-request bodies.
package secrets

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// Finding is one secret found. It deliberately has no field for the secret.
type Finding struct {
	File        string `json:"file"`
	Line        int    `json:"line"`
	RuleID      string `json:"rule"`
	Description string `json:"description"`
}

// String is "file:line: rule (description)".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s (%s)", f.File, f.Line, f.RuleID, f.Description)
}

// Scanner holds the compiled rule set. It is safe for concurrent use.
type Scanner struct {
	det *detect.Detector
	// values are known secrets found verbatim (WithValues).
	values []value
}

var (
	defaultOnce    sync.Once
	defaultScanner *Scanner
	defaultErr     error
)

// Default returns the scanner with gitleaks' default configuration. The
// rules are compiled once per process: gitleaks loads them through a global
// viper instance, which is neither cheap nor safe to do concurrently.
func Default() (*Scanner, error) {
	defaultOnce.Do(func() {
		det, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			defaultErr = fmt.Errorf("load gitleaks rules: %w", err)
			return
		}
		// A `gitleaks:allow` comment must not hide what the model wrote:
		// the text scanned here is not the repository owner's.
		det.IgnoreGitleaksAllow = true
		defaultScanner = &Scanner{det: det}
	})
	return defaultScanner, defaultErr
}

// Scan returns the secrets in content, attributed to file. Lines are
// 1-based within content.
func (s *Scanner) Scan(file, content string) []Finding {
	return s.ScanContext(context.Background(), file, content)
}

// ScanContext is Scan that stops early when ctx ends. A scan cut short
// may miss findings, so a caller whose context ended must not treat the
// text as clean: it checks ctx.Err() afterwards.
func (s *Scanner) ScanContext(ctx context.Context, file, content string) []Finding {
	found := s.direct(ctx, file, content)
	if len(found) == 0 {
		found = s.decoded(ctx, file, content)
	}
	return findingsOf(found)
}

// ScanChange returns the secrets that after has and before did not: those a
// change introduced. A secret that was already in the file is not the
// change's doing and does not block it. The encoded runs of the lines the
// change added are decoded and scanned too, as tool output's are, so a
// base64-encoded key in a new file is found.
func (s *Scanner) ScanChange(file, before, after string) []Finding {
	old := map[string]bool{}
	for _, f := range s.det.DetectString(before) {
		old[f.RuleID+"\x00"+f.Secret] = true
	}
	var out []Finding
	for _, f := range s.det.DetectString(after) {
		if old[f.RuleID+"\x00"+f.Secret] {
			continue
		}
		out = append(out, Finding{File: file, Line: f.StartLine + 1, RuleID: f.RuleID, Description: f.Description})
	}
	hadValue := map[string]bool{}
	for _, m := range s.valueMatches(file, before) {
		hadValue[m.Description] = true
	}
	for _, m := range s.valueMatches(file, after) {
		if !hadValue[m.Description] && !slices.Contains(out, m.Finding) {
			out = append(out, m.Finding)
		}
	}
	for _, m := range s.decoded(context.Background(), file, addedLines(before, after)) {
		if !slices.Contains(out, m.Finding) {
			out = append(out, m.Finding)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// maxDecodedChange bounds the bytes of one file's added lines that
// ScanChange decodes: a changed file is at most gitrepo.MaxFileBytes.
const maxDecodedChange = 10 << 20

// addedLines is after with each line that before also has blanked, line
// numbers kept, and cut at maxDecodedChange bytes: only what the change
// added is decoded, and a blanked line ends a wrapped run, as an unchanged
// line is no part of what was added.
func addedLines(before, after string) string {
	if len(after) > maxDecodedChange {
		after = after[:maxDecodedChange]
	}
	had := map[string]bool{}
	for l := range strings.SplitSeq(before, "\n") {
		had[l] = true
	}
	lines := strings.Split(after, "\n")
	for i, l := range lines {
		if had[l] {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// ScanPath returns the secrets in a path's own text, its file and
// directory names (a new file named after a key is as much a leak as one
// holding it), and the path with each match withheld: the form of the
// path that may be shown. Findings have no line, and their File is that
// form.
func (s *Scanner) ScanPath(ctx context.Context, path string) (string, []Finding, error) {
	shown, found, err := s.redact(ctx, "", path, true)
	for i := range found {
		found[i].File = shown
	}
	return shown, found, err
}

// Redact returns text with each match of the rules, in the text itself
// or in an encoded run once decoded, replaced by a Note naming its rule
// and line, and the findings. When the text so withheld still holds a
// match (a secret only the whole text forms), all of it is replaced by
// one Note. A scan cut short by ctx is an error, never a clean text.
func (s *Scanner) Redact(ctx context.Context, name, text string) (string, []Finding, error) {
	return s.redact(ctx, name, text, false)
}

// redact is Redact; noLines drops the line from the findings, for a
// one-line text such as a path.
func (s *Scanner) redact(ctx context.Context, name, text string, noLines bool) (string, []Finding, error) {
	if text == "" {
		return text, nil, ctx.Err()
	}
	found := append(s.direct(ctx, name, text), s.decoded(ctx, name, text)...)
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	if len(found) == 0 {
		return text, nil, nil
	}
	for i := range found {
		if noLines {
			found[i].Line = 0
		}
	}
	out := replaceMatches(text, found)
	rest := s.ScanContext(ctx, name, out)
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	if len(rest) > 0 {
		out = Note(findingsOf(found)...)
	}
	return out, findingsOf(found), nil
}

// match is a finding and the bytes of the scanned text it covers.
type match struct {
	Finding
	start, end int
}

// findingsOf is the findings of found, in line order, each once.
func findingsOf(found []match) []Finding {
	var out []Finding
	for _, m := range found {
		if !slices.Contains(out, m.Finding) {
			out = append(out, m.Finding)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// direct applies the rules to content as it is. Each occurrence of a
// matched text is a match: the same key twice is withheld twice.
func (s *Scanner) direct(ctx context.Context, file, content string) []match {
	if content == "" {
		return nil
	}
	out := s.valueMatches(file, content)
	//lint:ignore SA1019 DetectContext, the only entry point of gitleaks v8 that takes a context, takes this type.
	for _, f := range s.det.DetectContext(ctx, detect.Fragment{Raw: content}) {
		fd := Finding{File: file, Line: f.StartLine + 1, RuleID: f.RuleID, Description: f.Description}
		start, end := 0, len(content)
		if i := strings.Index(content, f.Match); f.Match != "" && i >= 0 {
			start, end = i, i+len(f.Match)
		}
		out = append(out, match{fd, start, end})
		for from := end; f.Match != "" && from < len(content); {
			i := strings.Index(content[from:], f.Match)
			if i < 0 {
				break
			}
			out = append(out, match{fd, from + i, from + i + len(f.Match)})
			from += i + len(f.Match)
		}
	}
	return out
}

// replaceMatches puts a Note in place of each match's bytes; matches
// that overlap are withheld together, with one note.
func replaceMatches(text string, found []match) string {
	ms := slices.Clone(found)
	slices.SortStableFunc(ms, func(a, b match) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for i := 0; i < len(ms); {
		start, end := ms[i].start, ms[i].end
		group := []Finding{ms[i].Finding}
		for i++; i < len(ms) && ms[i].start < end; i++ {
			end = max(end, ms[i].end)
			group = append(group, ms[i].Finding)
		}
		start = max(start, at)
		b.WriteString(text[at:start])
		b.WriteString(Note(group...))
		at = max(at, end)
	}
	b.WriteString(text[at:])
	return b.String()
}

// decoded scans the decodings of content's encoded runs together, in
// one detector call (each call has a fixed cost that dominated when
// every wrapped line was one), and maps each finding back to the run it
// came from: its line of content and its bytes.
func (s *Scanner) decoded(ctx context.Context, file, content string) []match {
	blocks := decodedSegments(content)
	if len(blocks) == 0 {
		return nil
	}
	var b strings.Builder // one line per block
	for _, bl := range blocks {
		b.WriteString(strings.ReplaceAll(bl.text, "\n", " "))
		b.WriteByte('\n')
	}
	out := s.valuesInBlocks(file, blocks)
	//lint:ignore SA1019 DetectContext, the only entry point of gitleaks v8 that takes a context, takes this type.
	for _, f := range s.det.DetectContext(ctx, detect.Fragment{Raw: b.String()}) {
		bl := blocks[min(max(f.StartLine, 0), len(blocks)-1)]
		out = append(out, match{Finding{File: file, Line: bl.line, RuleID: f.RuleID, Description: f.Description}, bl.start, bl.end})
	}
	return out
}

// block is text found in content, from line (1-based); start and end
// are the bytes of content it was decoded from.
type block struct {
	text       string
	line       int
	start, end int
}

// Encoded text is decoded here rather than by gitleaks' own decoder
// (Detector.MaxDecodeDepth): that one finds candidates with a regular
// expression that made scanning ordinary code fifty times slower
// (95 MB/s to 2 MB/s, measured on search results). This is one pass over
// the bytes, one level deep: `base64 .env` is caught, `base64 .env |
// base64` is not, and no scanner can promise more (the model can encode
// what it read in ways no rule knows).

// minEncoded is the shortest run of base64 or hex taken for an encoding:
// shorter runs are ordinary words and identifiers.
const minEncoded = 20

// minWrapped is the shortest line taken for a wrapped line of an
// encoding: base64(1) wraps at 76 columns, PEM and openssl at 64.
const minWrapped = 60

// decodedSegments returns the printable decodings of the base64 and hex
// runs of content, and of runs of wrapped lines joined, so that a secret
// split by a line break, as base64(1) prints it, is decoded whole.
func decodedSegments(content string) []block {
	var out []block
	line := 1
	for i := 0; i < len(content); {
		c := content[i]
		if !isEncodingByte(c) {
			if c == '\n' {
				line++
			}
			i++
			continue
		}
		j := i
		for j < len(content) && isEncodingByte(content[j]) {
			j++
		}
		for j < len(content) && j-i < len(content) && content[j] == '=' {
			j++ // padding
		}
		if j-i >= minEncoded {
			if d, ok := decode(content[i:j]); ok {
				out = append(out, block{text: d, line: line, start: i, end: j})
			}
		}
		i = j
	}
	for _, b := range wrappedBlocks(content) {
		if d, ok := decode(b.text); ok {
			b.text = d
			out = append(out, b)
		}
	}
	return out
}

// wrappedBlocks joins runs of two or more lines that look like a wrapped
// encoding: each but the last at least minWrapped bytes of the alphabet.
func wrappedBlocks(content string) []block {
	var out []block
	var run []string
	var cur block
	flush := func() {
		if len(run) > 1 {
			cur.text = strings.Join(run, "")
			out = append(out, cur)
		}
		run = nil
	}
	at := 0 // the byte where line i starts
	for i, raw := range strings.Split(content, "\n") {
		start, end := at, at+len(raw)
		at = end + 1
		l := strings.TrimSpace(raw)
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return r > 127 || !isEncodingByte(byte(r)) && r != '=' }) >= 0 {
			flush()
			continue
		}
		if len(run) == 0 {
			if len(l) < minWrapped {
				continue
			}
			cur = block{line: i + 1, start: start}
		}
		run = append(run, l)
		cur.end = end
		if len(l) < minWrapped { // a short line ends a wrapped block
			flush()
		}
	}
	flush()
	return out
}

// isEncodingByte: the base64 alphabets (standard and URL-safe), which
// include hex digits.
func isEncodingByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// decode tries s as hex, then as base64 at each of the four alignments
// (a run can start inside a word: "key:QVdT..."), and keeps a decoding
// that is mostly printable text.
func decode(s string) (string, bool) {
	s = strings.TrimRight(s, "=")
	if len(s)%2 == 0 && strings.Trim(s, "0123456789abcdefABCDEF") == "" {
		if b, err := hex.DecodeString(s); err == nil && printable(b) {
			return string(b), true
		}
	}
	std := strings.NewReplacer("-", "+", "_", "/").Replace(s)
	for k := 0; k < 4 && len(std)-k >= minEncoded; k++ {
		t := std[k:]
		t = t[:len(t)-len(t)%4+min(len(t)%4, 3)]
		if len(t)%4 == 1 {
			t = t[:len(t)-1]
		}
		if b, err := base64.RawStdEncoding.DecodeString(t); err == nil && printable(b) {
			return string(b), true
		}
	}
	return "", false
}

// printable: at least 90% of the bytes are printable ASCII or white
// space, as text is and random bytes are not.
func printable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	n := 0
	for _, c := range b {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' || c == '\r' {
			n++
		}
	}
	return n*10 >= len(b)*9
}
