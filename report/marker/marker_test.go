package marker

import (
	"strings"
	"testing"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

// TestRoundTrip: what each renderer writes, its parser (or All) reads
// back, wherever in a body the marker stands.
func TestRoundTrip(t *testing.T) {
	body := strings.Join([]string{Run("run.1", 3), "text", History([]byte(`{"a":1}`)), "more", Pushed(sha)}, "\n")
	if got := ParsePushed(body); got != sha {
		t.Errorf("ParsePushed = %q", got)
	}
	if id, n, ok := ParseRun(body); !ok || id != "run.1" || n != 3 {
		t.Errorf("ParseRun = %q %d %v", id, n, ok)
	}
	if p, ok := ParseHistory(body); !ok || string(p) != `{"a":1}` {
		t.Errorf("ParseHistory = %q %v", p, ok)
	}
	// The order of the markers does not matter to any reader.
	reversed := strings.Join([]string{Pushed(sha), History([]byte("x")), Run("r", 1)}, "\n")
	if ParsePushed(reversed) != sha {
		t.Error("a pushed marker first is not read")
	}
	if _, n, ok := ParseRun(reversed); !ok || n != 1 {
		t.Error("a run marker last is not read")
	}
	var kinds []Kind
	for _, f := range All(body + "\n" + Status(4) + Plan(4, "t-1") + Reply("d-1")) {
		kinds = append(kinds, f.Kind)
	}
	want := []Kind{KindRun, KindHistory, KindPushed, KindStatus, KindPlan, KindReply}
	if strings.Join(kindStrings(kinds), ",") != strings.Join(kindStrings(want), ",") {
		t.Errorf("All kinds = %v, want %v", kinds, want)
	}
}

// TestBadInput: values that could end a comment or fake another marker are
// made inert, and what is not a marker parses as nothing.
func TestBadInput(t *testing.T) {
	for _, v := range []string{"a --> <!-- patchwright:pushed " + sha + " -->", "", "x\ny"} {
		for _, m := range []string{Plan(1, v), Reply(v), Run(v, 1)} {
			if strings.Count(m, "-->") != 1 || strings.Count(m, "<!--") != 1 || strings.Contains(m, "\n") {
				t.Errorf("value %q escapes its marker: %q", v, m)
			}
			if ParsePushed(m) != "" {
				t.Errorf("value %q forges a pushed marker: %q", v, m)
			}
		}
	}
	for _, body := range []string{"", "<!-- patchwright:pushed abc -->", "<!-- patchwright:pushed " + strings.ToUpper(sha) + " -->"} {
		if got := ParsePushed(body); got != "" {
			t.Errorf("ParsePushed(%q) = %q", body, got)
		}
	}
	if _, ok := ParseHistory("<!-- patchwright:history !!! -->"); ok {
		t.Error("a history that is not base64 parsed")
	}
	if _, ok := ParseHistory("<!-- patchwright:history YQ -->"); ok {
		t.Error("a history with broken padding parsed")
	}
	if _, _, ok := ParseRun("<!-- patchwright:run=r attempt=x -->"); ok {
		t.Error("a run without a number parsed")
	}
	if _, _, ok := ParseRun("<!-- patchwright:run=r attempt=99999999999999999999 -->"); ok {
		t.Error("a run whose attempt overflows parsed")
	}
}

// TestParsePushedTakesTheLast: a body quoting an older marker above the
// current one reads the current.
func TestParsePushedTakesTheLast(t *testing.T) {
	old := strings.Repeat("1", 40)
	if got := ParsePushed(Pushed(old) + "\n" + Pushed(sha)); got != sha {
		t.Errorf("got %q", got)
	}
}

// TestKeep: a rewrite keeps the markers it does not own, drops none twice
// and leaves an owned kind to the rewriter.
func TestKeep(t *testing.T) {
	before := Run("r", 1) + "\nbody\n" + History([]byte("h")) + "\n" + Pushed(sha) + "\n"
	after := "cut\n" + History([]byte("new"))
	got := Keep(before, after, KindHistory)
	if ParsePushed(got) != sha {
		t.Errorf("pushed lost: %q", got)
	}
	if _, _, ok := ParseRun(got); !ok {
		t.Errorf("run lost: %q", got)
	}
	if p, _ := ParseHistory(got); string(p) != "new" || strings.Count(got, "patchwright:history") != 1 {
		t.Errorf("owned history replaced or doubled: %q", got)
	}
	// A kind the rewrite wrote anew is not brought back from before.
	newer := strings.Repeat("2", 40)
	got = Keep(before, "x\n"+Pushed(newer))
	if ParsePushed(got) != newer || strings.Count(got, "patchwright:pushed") != 1 {
		t.Errorf("an old pushed marker came back: %q", got)
	}
	// Owned and dropped stays dropped.
	if got := Keep(before, "x", KindPushed, KindRun, KindHistory); got != "x" {
		t.Errorf("owned markers came back: %q", got)
	}
	if got := Keep("no markers", "x"); got != "x" {
		t.Errorf("a body without markers changed: %q", got)
	}
}

func kindStrings(ks []Kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}
