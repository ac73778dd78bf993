// Package secrets finds credentials in text with gitleaks' default rules,
// so that a diff carrying one is never committed or pushed and tool output
// carrying one never reaches the model (DESIGN §5): agent/tools withholds
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
	if content == "" {
		return nil
	}
	var out []Finding
	add := func(text string, firstLine int) {
		//lint:ignore SA1019 DetectContext, the only entry point of gitleaks v8 that takes a context, takes this type.
		for _, f := range s.det.DetectContext(ctx, detect.Fragment{Raw: text}) {
			out = append(out, Finding{
				File:        file,
				Line:        firstLine + f.StartLine,
				RuleID:      f.RuleID,
				Description: f.Description,
			})
		}
	}
	add(content, 1)
	if len(out) == 0 {
		s.scanDecoded(ctx, file, content, &out)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// ScanChange returns the secrets that after has and before did not: those a
// change introduced. A secret that was already in the file is not the
// change's doing and does not block it.
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
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// scanDecoded scans the decodings of content's encoded runs together, in
// one detector call (each call has a fixed cost that dominated when
// every wrapped line was one), and maps each finding back to the line of
// content its run started on.
func (s *Scanner) scanDecoded(ctx context.Context, file, content string, out *[]Finding) {
	blocks := decodedSegments(content)
	if len(blocks) == 0 {
		return
	}
	var b strings.Builder
	starts := make([]int, len(blocks)) // 0-based line of each block in b
	line := 0
	for i, bl := range blocks {
		starts[i] = line
		text := strings.ReplaceAll(bl.text, "\n", " ")
		b.WriteString(text)
		b.WriteByte('\n')
		line++
	}
	//lint:ignore SA1019 DetectContext, the only entry point of gitleaks v8 that takes a context, takes this type.
	for _, f := range s.det.DetectContext(ctx, detect.Fragment{Raw: b.String()}) {
		i := sort.SearchInts(starts, f.StartLine+1) - 1
		*out = append(*out, Finding{File: file, Line: blocks[max(i, 0)].line, RuleID: f.RuleID, Description: f.Description})
	}
}

// block is text found in content, from line (1-based).
type block struct {
	text string
	line int
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
				out = append(out, block{text: d, line: line})
			}
		}
		i = j
	}
	for _, b := range wrappedBlocks(content) {
		if d, ok := decode(b.text); ok {
			out = append(out, block{text: d, line: b.line})
		}
	}
	return out
}

// wrappedBlocks joins runs of two or more lines that look like a wrapped
// encoding: each but the last at least minWrapped bytes of the alphabet.
func wrappedBlocks(content string) []block {
	var out []block
	var run []string
	start := 0
	flush := func() {
		if len(run) > 1 {
			out = append(out, block{text: strings.Join(run, ""), line: start})
		}
		run = nil
	}
	for i, l := range strings.Split(content, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return r > 127 || !isEncodingByte(byte(r)) && r != '=' }) >= 0 {
			flush()
			continue
		}
		if len(run) == 0 {
			if len(l) < minWrapped {
				continue
			}
			start = i + 1
		}
		run = append(run, l)
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
