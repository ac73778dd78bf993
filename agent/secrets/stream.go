package secrets

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"hash/maphash"
	"io"
	"sort"
	"strconv"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// A changed file is scanned in windows (issue 23), so the worker never
// holds it whole: each window is up to scanChunk new bytes, ended at a
// line break when it has one, after the last scanOverlap bytes of the
// window before. A secret that spans a chunk's edge is in a window whole
// if it is shorter than the overlap: a PEM key of 4,096 bits is about
// 3 KB.
const (
	scanChunk   = 1 << 20
	scanOverlap = 64 << 10
)

// chunkBytes and overlapBytes are what windows uses: scanChunk and
// scanOverlap, but for tests, which shrink them to cross many edges on a
// few kilobytes. At the real sizes each edge costs a megabyte of filler
// that the rules' regexes read, seconds a case under -race (issue 22).
var chunkBytes, overlapBytes = scanChunk, scanOverlap

// ScanChangeStream is ScanChange on readers, with ScanChange's rules
// (gitleaks' and the values of WithValues): the secrets after has that
// before (nil for a new file) did not, after's added lines decoded too,
// read in windows of bounded size rather than whole.
func (s *Scanner) ScanChangeStream(ctx context.Context, file string, before, after io.Reader) ([]Finding, error) {
	old := map[string]bool{}
	had := map[uint64]bool{}
	seed := maphash.MakeSeed()
	if before != nil {
		// Two passes over before would need it twice; one reader is
		// teed: its windows for the rules, its lines for addedLines.
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- lineHashes(pr, seed, had) }()
		err := windows(io.TeeReader(before, pw), func(w string, _ int, _ int64) {
			for _, f := range s.detect(ctx, w) {
				old[f.RuleID+"\x00"+f.Secret] = true
			}
			for _, m := range s.valueMatches("", w) {
				old[m.RuleID+"\x00"+m.Description] = true
			}
		})
		pw.CloseWithError(err)
		if err := errors.Join(err, <-done); err != nil {
			return nil, err
		}
	}
	var out []Finding
	seen := map[string]bool{}
	err := windows(after, func(w string, line int, offset int64) {
		for _, f := range s.detect(ctx, w) {
			at := line + f.StartLine
			key := f.RuleID + "\x00" + f.Secret + "\x00" + strconv.Itoa(at)
			if old[f.RuleID+"\x00"+f.Secret] || seen[key] {
				continue // already in the file, or in the overlap again
			}
			seen[key] = true
			out = append(out, Finding{File: file, Line: at, RuleID: f.RuleID, Description: f.Description})
		}
		// The operator's values, as ScanChange finds them: one the file
		// had before is not the change's doing.
		out = addWindowMatches(out, s.valueMatches(file, w), line, func(m match) bool {
			return old[m.RuleID+"\x00"+m.Description]
		})
		if offset < maxDecodedChange {
			out = addWindowMatches(out, s.decoded(ctx, file, blankKnown(w, seed, had)), line, nil)
		}
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out, nil
}

func (s *Scanner) detect(ctx context.Context, text string) []report.Finding {
	if text == "" {
		return nil
	}
	//lint:ignore SA1019 DetectContext, the only entry point of gitleaks v8 that takes a context, takes this type.
	return s.det.DetectContext(ctx, detect.Fragment{Raw: text})
}

// windows calls fn with each window of r, the line (1-based) and the
// byte of r it starts at; windows after the first begin with the last whole lines of
// the one before, up to overlapBytes bytes.
func windows(r io.Reader, fn func(window string, line int, offset int64)) error {
	chunk := make([]byte, chunkBytes)
	var carry []byte
	line, offset := 1, int64(0)
	for {
		n, err := fill(r, chunk)
		eof := err == io.EOF
		if err != nil && !eof {
			return err
		}
		data := append(carry, chunk[:n]...)
		cut := len(data)
		if i := bytes.LastIndexByte(data, '\n'); !eof && i >= len(carry) {
			cut = i + 1 // the rest of the last line goes to the next window
		}
		if cut > 0 && (len(carry) < len(data) || eof) {
			fn(string(data[:cut]), line, offset)
		}
		if eof {
			return nil
		}
		keep := max(0, cut-overlapBytes)
		if j := bytes.IndexByte(data[keep:cut], '\n'); keep > 0 && j >= 0 && keep+j+1 < cut {
			keep += j + 1 // start the overlap at a line
		}
		line += bytes.Count(data[:keep], []byte{'\n'})
		offset += int64(keep)
		carry = append([]byte(nil), data[keep:]...)
	}
}

// fill reads r until buf is full or r ends (io.EOF) or fails.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// lineHashes adds the hash of each line of r to had.
func lineHashes(r io.Reader, seed maphash.Seed, had map[uint64]bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var h maphash.Hash
	h.SetSeed(seed)
	for {
		part, err := br.ReadSlice('\n')
		h.Write(bytes.TrimSuffix(part, []byte{'\n'}))
		if err == bufio.ErrBufferFull {
			continue // a long line, hashed in parts
		}
		if err == nil || len(part) > 0 || err == io.EOF {
			had[h.Sum64()] = true
			h.Reset()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// blankKnown is w with each line that before also has blanked, as
// addedLines does.
func blankKnown(w string, seed maphash.Seed, had map[uint64]bool) string {
	if len(had) == 0 {
		return w
	}
	lines := bytes.Split([]byte(w), []byte{'\n'})
	for i, l := range lines {
		if had[maphash.Bytes(seed, l)] {
			lines[i] = nil
		}
	}
	return string(bytes.Join(lines, []byte{'\n'}))
}
