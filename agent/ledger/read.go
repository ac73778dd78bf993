package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxLine bounds one event line when reading. Tool results and command
// output are capped long before they reach the ledger; a longer line means
// the file is not a ledger.
const maxLine = 64 << 20

// Log is a ledger loaded back from its JSON lines.
type Log struct {
	Records []Record
	// TornTail is true when the last line was cut off mid-write (the
	// process stopped while writing it) and was left out.
	TornTail bool
}

// Read loads a ledger. Every complete line must be an event with the next
// sequence number; a final line without its newline that is not valid JSON
// is the event that was in flight when the writer stopped, and is dropped
// with TornTail set.
func Read(r io.Reader) (Log, error) {
	var log Log
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err != nil && err != io.EOF {
			return log, fmt.Errorf("read ledger line %d: %w", n, err)
		}
		complete := err == nil
		if len(line) == 0 && !complete {
			return log, nil
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		rec, perr := parse(line)
		if perr != nil {
			if !complete {
				log.TornTail = true
				return log, nil
			}
			return log, fmt.Errorf("ledger line %d: %w", n, perr)
		}
		if want := int64(len(log.Records) + 1); rec.Seq != want {
			return log, fmt.Errorf("ledger line %d: sequence %d, want %d", n, rec.Seq, want)
		}
		log.Records = append(log.Records, rec)
		if !complete {
			return log, nil
		}
	}
}

// ReadFile loads the ledger at path.
func ReadFile(path string) (Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return Log{}, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	log, err := Read(f)
	if err != nil {
		return log, fmt.Errorf("%s: %w", path, err)
	}
	return log, nil
}

// readLine returns one line with its newline, or the unterminated rest of
// the input with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		if err != bufio.ErrBufferFull {
			return buf, err
		}
	}
}

func parse(line []byte) (Record, error) {
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return Record{}, fmt.Errorf("not a JSON event: %w", err)
	}
	if rec.Type == "" || rec.Seq == 0 {
		return Record{}, fmt.Errorf("event without type or seq")
	}
	rec.Raw = append(json.RawMessage(nil), line...)
	return rec, nil
}
