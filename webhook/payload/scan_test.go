package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// validityCases are documents whose validity must agree with json.Valid.
var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`,
	` {"a" : [1, 2, {"b": null}] } `, "\t\n\r[ ]", `"\u00e9\n\"\\\/\b\f\r\t"`,
	`{"a":1,"a":2}`, "\"caf\xc3\xa9\"", "\"\xff\xfe\"",
	``, ` `, `{`, `}`, `[`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
	`{"a":1 "b":2}`, `{a:1}`, `{'a':1}`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`,
	`0x10`, `NaN`, `tru`, `nul`, `truex`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\x01b\"", "\"tab\tin\"", `{} {}`, `[] x`, `"a" "b"`, `{"a":1}}`, `[1]]`,
	`{"a":[1,2}`, `{"a":{"b":1]}`,
}

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range validityCases {
		err := scan([]byte(doc), nil, nil)
		if want := json.Valid([]byte(doc)); (err == nil) != want {
			t.Errorf("scan(%q) = %v; json.Valid = %v", doc, err, want)
		}
		if err != nil && !errors.Is(err, errSyntax) {
			t.Errorf("scan(%q) = %v, not a syntax error", doc, err)
		}
	}
}

func TestScanDepthLimit(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			close := map[string]string{"[": "]", `{"a":`: "}"}[open]
			doc := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth))
			err := scan(doc, nil, nil)
			if (err == nil) != json.Valid(doc) {
				t.Errorf("depth %d of %s: scan = %v, json.Valid = %v", depth, open, err, json.Valid(doc))
			}
		}
	}
	// A body of nothing but '[' must fail, not exhaust the stack.
	if err := scan([]byte(strings.Repeat("[", 25<<20)), nil, nil); err == nil {
		t.Error("25 MiB of '[' accepted")
	}
}

var testPaths = []string{"a", "b.c", "b.d.e", "k"}

// reference picks a path the slow way, through encoding/json: the value,
// or mismatch if an object on the way is something else.
func reference(m any, path string) (v any, present, mismatch bool) {
	for _, key := range strings.Split(path, ".") {
		switch o := m.(type) {
		case nil:
			return nil, false, false
		case map[string]any:
			if m, present = o[key]; !present {
				return nil, false, false
			}
		default:
			return nil, false, true
		}
	}
	return m, true, false
}

// shaped is testPaths as go-github would declare them: decoding into it
// fails when a value on the way is not an object, wherever it occurs.
type shaped struct {
	B *struct {
		D *struct{} `json:"d"`
	} `json:"b"`
}

func checkPick(t *testing.T, doc []byte) {
	t.Helper()
	got, err := newPaths(testPaths...).pick(doc)
	if !json.Valid(doc) {
		if err == nil {
			t.Fatalf("pick(%q) accepted invalid JSON", doc)
		}
		return
	}
	m, uerr := decodeAny(doc)
	if uerr != nil {
		t.Fatalf("decode %q: %v", doc, uerr)
	}
	if err != nil {
		// A wrong shape: encoding/json refuses it too.
		if errors.Is(err, errSyntax) || json.Unmarshal(doc, new(shaped)) == nil {
			t.Fatalf("pick(%q) = %v; encoding/json decodes it", doc, err)
		}
		return
	}
	for i, path := range testPaths {
		want, present, mismatch := reference(m, path)
		if mismatch {
			t.Fatalf("pick(%q) accepted a non-object on the way to %s", doc, path)
		}
		if (got[i] != nil) != present {
			t.Fatalf("pick(%q) %s = %q; present = %v", doc, path, got[i], present)
		}
		if got[i] == nil {
			continue
		}
		if v, uerr := decodeAny(got[i]); uerr != nil || !reflect.DeepEqual(v, want) {
			t.Fatalf("pick(%q) %s = %q (%v); encoding/json says %#v", doc, path, got[i], uerr, want)
		}
	}
}

// decodeAny decodes with numbers kept as text: 1E700 is valid JSON.
func decodeAny(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func TestPick(t *testing.T) {
	for _, doc := range []string{
		`{"a":"x","b":{"c":1,"d":{"e":[true]}},"k":null}`,
		`{"b":{"d":null}}`,
		`{"b":null,"a":{"nested":"object"}}`,
		`{"\u0061":"escaped key","b":{"c":"\"quoted\""}}`,
		`{"b":{"c":1},"b":{"d":{"e":2}}}`, // the last "b" wins: no c
		`{"b":{"c":1},"b":3}`,             // not an object on the way
		`{"b":[{"c":1}]}`,
		`{"a":1}garbage`,
		`[{"a":1}]`,
		`"a"`,
		`null`,
		`{"x":{"b":{"c":"not on the path"}}}`,
	} {
		checkPick(t, []byte(doc))
	}
}

func FuzzPick(f *testing.F) {
	for _, doc := range validityCases {
		f.Add([]byte(doc))
	}
	f.Add([]byte(`{"a":"x","b":{"c":1,"d":{"e":[true]}},"k":null}`))
	f.Add([]byte(`{"b":{"c":1},"b":{"d":{"e":2}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := scan(doc, nil, nil)
		if (err == nil) != json.Valid(doc) {
			t.Fatalf("scan(%q) = %v; json.Valid = %v", doc, err, json.Valid(doc))
		}
		checkPick(t, doc)
	})
}

func TestNewPathsRefusesOverlap(t *testing.T) {
	for _, names := range [][]string{{"a", "a.b"}, {"a.b", "a"}, {"a", "a"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("newPaths(%q) did not panic", names)
				}
			}()
			newPaths(names...)
		}()
	}
}

func TestSpecialMatchesPlain(t *testing.T) {
	for b := range 256 {
		for pos := range 8 {
			word := []byte("aaaaaaaa")
			word[pos] = byte(b)
			w := uint64(0)
			for i := 7; i >= 0; i-- {
				w = w<<8 | uint64(word[i])
			}
			if special(w) == plain[b] {
				t.Fatalf("special(%q) = %v; byte %#x plain = %v", word, special(w), b, plain[b])
			}
		}
	}
}
