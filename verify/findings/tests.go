package findings

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/verify/testsrc"
)

// located is a test and the file it is in, with its source squashed
// once for matching (with and without its name).
type located struct {
	path           string
	tc             testsrc.Test
	squashed, body string
}

func locate(p string, tc testsrc.Test) located {
	return located{path: p, tc: tc, squashed: squash(tc.Text), body: squash(strings.Replace(tc.Text, tc.Short, "", 1))}
}

// pair is one test before and after the change.
type pair struct{ base, next located }

// testFindings compares the tests of every changed file before and after
// the change; behaviour lists the changed files that are code. It returns
// the pairs of tests too, so a renamed test's runs are followed.
func testFindings(in Input, behaviour []string) ([]Finding, []pair) {
	var base, next []located
	for _, f := range in.Files {
		for _, tc := range testsOf(f.Path, f.Base) {
			base = append(base, locate(f.Path, tc))
		}
		for _, tc := range testsOf(f.Path, f.New) {
			next = append(next, locate(f.Path, tc))
		}
	}
	pairs, removed, added := matchTests(base, next)
	var out []Finding
	out = append(out, removedFindings(in.Files, base, removed, len(added))...)
	var skips skipSet
	for _, p := range pairs {
		out = append(out, pairFindings(p, len(behaviour) > 0, &skips)...)
	}
	for _, a := range added {
		skips.add(a, nil, true)
	}
	out = append(out, skips.findings()...)
	out = append(out, constraintFindings(in.Files)...)
	if len(behaviour) == 0 {
		out = append(out, expectedDataFindings(in.Files)...)
		out = append(out, onlyTestsFindings(in, pairs, removed, added)...)
	}
	return out, pairs
}

// matchTests pairs each test before the change with itself after it
// (testsrc.Match); what is left over was removed or added.
func matchTests(base, next []located) (pairs []pair, removed, added []located) {
	of := func(ls []located) []testsrc.Located {
		out := make([]testsrc.Located, len(ls))
		for i, l := range ls {
			out[i] = testsrc.Located{Path: l.path, Test: l.tc}
		}
		return out
	}
	back := func(ls []testsrc.Located) []located {
		var out []located
		for _, l := range ls {
			out = append(out, locate(l.Path, l.Test))
		}
		return out
	}
	ps, r, a := testsrc.Match(of(base), of(next))
	for _, p := range ps {
		pairs = append(pairs, pair{locate(p.Base.Path, p.Base.Test), locate(p.Next.Path, p.Next.Test)})
	}
	return pairs, back(r), back(a)
}

// squash collapses all whitespace, so re-indenting a moved test keeps it
// the same test.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// removedFindings reports removed tests, one finding per file when a file
// lost every test it had. A test whose file no longer builds here, or
// that moved into such a file, is removed too, and the finding says why.
func removedFindings(files []File, base, removed []located, added int) []Finding {
	total := map[string]int{}
	for _, b := range base {
		total[b.path]++
	}
	gone := map[string][]located{}
	var order []string
	for _, r := range removed {
		if gone[r.path] == nil {
			order = append(order, r.path)
		}
		gone[r.path] = append(gone[r.path], r)
	}
	deleted := map[string]bool{}
	for _, f := range files {
		deleted[f.Path] = f.New == nil
	}
	unbuilt := unbuiltFiles(files)
	// Tests the change adds may cover what was removed; a reviewer decides.
	unless := "."
	switch {
	case added == 1:
		unless = " unless the test the change adds covers it."
	case added > 1:
		unless = fmt.Sprintf(" unless the %d tests the change adds cover it.", added)
	}
	var out []Finding
	for _, p := range order {
		tests := gone[p]
		if len(tests) == total[p] && len(tests) > 1 {
			out = append(out, Finding{Kind: TestsRemoved, Path: p, Detail: fmt.Sprintf(
				"%s, so what they checked is no longer tested%s", fileGone(p, tests, deleted[p], unbuilt), unless)})
			continue
		}
		for _, t := range tests {
			out = append(out, Finding{Kind: TestsRemoved, Path: p, Line: t.tc.Line, Detail: fmt.Sprintf(
				"%s, so what it checked is no longer tested%s", testGone(t, unbuilt), unless)})
		}
	}
	return out
}

// unbuilt is a changed file that go test does not build here, with why,
// and the tests it declares all the same.
type unbuilt struct {
	path, why string
	tests     []testsrc.Test
}

// unbuiltFiles returns the changed files that exist after the change but
// do not build here (testsrc.Excluded).
func unbuiltFiles(files []File) []unbuilt {
	var out []unbuilt
	for _, f := range files {
		if f.New == nil {
			continue
		}
		if why := testsrc.Excluded(f.Path, f.New); why != "" {
			declared, _ := testsrc.Declared(f.Path, f.New)
			out = append(out, unbuilt{path: f.Path, why: why, tests: withoutBenchmarks(declared)})
		}
	}
	return out
}

// whereNow finds the file that does not build here holding a removed
// test: its own, or one it moved to (by name).
func whereNow(t located, files []unbuilt) *unbuilt {
	for i, u := range files {
		if u.path == t.path {
			return &files[i]
		}
	}
	for i, u := range files {
		for _, d := range u.tests {
			if d.Name == t.tc.Name {
				return &files[i]
			}
		}
	}
	return nil
}

// fileGone says how a file lost all its tests, up to the comma.
func fileGone(p string, tests []located, deleted bool, files []unbuilt) string {
	names := capList(testNames(tests), 4)
	switch u := whereNow(tests[0], files); {
	case u != nil && u.path == p:
		return fmt.Sprintf("%s still declares its %d tests (%s) but does not build: %s", p, len(tests), names, u.why)
	case u != nil:
		return fmt.Sprintf("%s lost its %d tests (%s) to %s, which does not build: %s", p, len(tests), names, u.path, u.why)
	case deleted:
		return fmt.Sprintf("%s was deleted with its %d tests (%s)", p, len(tests), names)
	}
	return fmt.Sprintf("%s no longer holds its %d tests (%s)", p, len(tests), names)
}

// testGone says how one test was lost, up to the comma.
func testGone(t located, files []unbuilt) string {
	switch u := whereNow(t, files); {
	case u != nil && u.path == t.path:
		return fmt.Sprintf("The test %q (line %d before the change) is still declared but its file does not build: %s", t.tc.Name, t.tc.Line, u.why)
	case u != nil:
		return fmt.Sprintf("The test %q (line %d before the change) moved to %s, which does not build: %s", t.tc.Name, t.tc.Line, u.path, u.why)
	}
	return fmt.Sprintf("The test %q (line %d before the change) was removed or is no longer collected as a test", t.tc.Name, t.tc.Line)
}

func testNames(ts []located) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = strconv.Quote(t.tc.Name)
	}
	return out
}

// newMarkers returns the markers of after that before did not have, by
// text, counting repeats.
func newMarkers(before, after []testsrc.Marker) []testsrc.Marker {
	had := map[string]int{}
	for _, m := range before {
		had[squash(m.Text)]++
	}
	var out []testsrc.Marker
	for _, m := range after {
		k := squash(m.Text)
		if had[k] > 0 {
			had[k]--
			continue
		}
		out = append(out, m)
	}
	return out
}

func pairFindings(p pair, behaviourChanged bool, skips *skipSet) []Finding {
	if skips.add(p.next, p.base.tc.Skips, false) {
		return nil
	}
	if behaviourChanged {
		return nil
	}
	return assertionFindings(p)
}

// skipSet gathers the markers tests gained, so a skip on a class or a
// module is one finding that names every test it silences.
type skipSet struct {
	order []testsrc.Marker
	paths map[testsrc.Marker]string
	tests map[testsrc.Marker][]string
}

// add records the markers a test gained and reports whether it gained
// any. For a new test only an .only counts: skipping a new test hides
// nothing that was tested before.
func (s *skipSet) add(t located, before []testsrc.Marker, isNew bool) bool {
	if s.tests == nil {
		s.paths, s.tests = map[testsrc.Marker]string{}, map[testsrc.Marker][]string{}
	}
	found := false
	for _, m := range newMarkers(before, t.tc.Skips) {
		if isNew && !m.Only {
			continue
		}
		m.Text = oneLineCode(m.Text)
		k := testsrc.Marker{Text: t.path + "\x00" + m.Text, Line: m.Line, Only: m.Only}
		if s.tests[k] == nil {
			s.order = append(s.order, k)
			s.paths[k] = t.path
		}
		s.tests[k] = append(s.tests[k], strconv.Quote(t.tc.Name))
		found = true
	}
	return found
}

func (s *skipSet) findings() []Finding {
	var out []Finding
	for _, k := range s.order {
		code := k.Text[strings.IndexByte(k.Text, 0)+1:]
		tests := s.tests[k]
		f := Finding{Kind: TestSkipped, Path: s.paths[k], Line: k.Line}
		switch {
		case k.Only:
			f.Detail = fmt.Sprintf("`%s` on %s makes the runner skip every other test in its file, so their passes are not evidence.", code, tests[0])
		case len(tests) == 1:
			f.Detail = fmt.Sprintf("`%s` now keeps the test %s from running or from counting, so its pass proves nothing about the change.", code, tests[0])
		default:
			f.Detail = fmt.Sprintf("`%s` now keeps %d tests (%s) from running or from counting, so their passes prove nothing about the change.", code, len(tests), capList(tests, 4))
		}
		out = append(out, f)
	}
	return out
}

// assertionFindings reports an existing test whose lines were edited or
// deleted, rather than only added to (a new table case is an addition).
func assertionFindings(p pair) []Finding {
	if p.base.body == p.next.body {
		return nil // only layout changed: gofmt, re-indenting, re-wrapping
	}
	// A renamed test is diffed without its name.
	before := strings.Replace(p.base.tc.Text, p.base.tc.Short, "", 1)
	after := strings.Replace(p.next.tc.Text, p.next.tc.Short, "", 1)
	ops := lineDiff(testsrc.Lines(before), testsrc.Lines(after))
	// Blank lines (comments are blanked) and the lines of a removed skip
	// marker say nothing about what the test checks.
	ignored := map[string]bool{"": true}
	for _, m := range p.base.tc.Skips {
		for l := range strings.Lines(testsrc.Lines(m.Text)) {
			ignored[strings.TrimSuffix(l, "\n")] = true
		}
	}
	for i, op := range ops {
		if op.Op != '-' || ignored[op.Text] {
			continue
		}
		at := p.next.tc.Line + op.NewLine - 1
		old := oneLineCode(op.Text)
		for _, o := range ops[i+1:] {
			if o.Op == '=' {
				break
			}
			if o.Op == '+' && o.Text != "" {
				return []Finding{{Kind: AssertionChanged, Path: p.next.path, Line: p.next.tc.Line + o.NewLine - 1, Detail: fmt.Sprintf(
					"In the test %q, `%s` became `%s` although no code under test changed, so the test was changed to pass rather than the code.",
					p.next.tc.Name, old, oneLineCode(o.Text))}}
			}
		}
		return []Finding{{Kind: AssertionChanged, Path: p.next.path, Line: at, Detail: fmt.Sprintf(
			"In the test %q, `%s` was deleted although no code under test changed, so the test checks less than it did.",
			p.next.tc.Name, old)}}
	}
	for _, op := range ops {
		if op.Op == '+' && earlyReturn.MatchString(strings.ReplaceAll(op.Text, " ", "")) {
			return []Finding{{Kind: AssertionChanged, Path: p.next.path, Line: p.next.tc.Line + op.NewLine - 1, Detail: fmt.Sprintf(
				"In the test %q, `%s` was added although no code under test changed, so the checks after it may no longer run.",
				p.next.tc.Name, oneLineCode(op.Text))}}
		}
	}
	return nil
}

// earlyReturn matches a line (spaces removed) that leaves a test before
// its checks: a bare return, or one guarded by an if.
var earlyReturn = regexp.MustCompile(`^(return;?|if.*\{return;?\}|if.*:return)$`)

// oneLineCode shortens source for a sentence.
func oneLineCode(s string) string {
	s = squash(s)
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:80], "") + "…"
	}
	return strings.ReplaceAll(s, "`", "'")
}

// constraintFindings reports a Go test file that gained or changed a
// build constraint that still builds it here: another system's go test
// may no longer build its tests. One that excludes linux/amd64 is a
// removal (removedFindings).
func constraintFindings(files []File) []Finding {
	var out []Finding
	for _, f := range files {
		if path.Ext(f.Path) != ".go" || !testsrc.IsTestPath(f.Path) || f.Base == nil || f.New == nil || testsrc.Excluded(f.Path, f.New) != "" {
			continue
		}
		before, _ := testsrc.GoConstraint(f.Base)
		after, at := testsrc.GoConstraint(f.New)
		if after == "" || after == before {
			continue
		}
		n := len(testsOf(f.Path, f.New))
		out = append(out, Finding{Kind: TestSkipped, Path: f.Path, Line: at, Detail: fmt.Sprintf(
			"The build constraint `%s` now decides whether the %s in %s are built, so a plain `go test` may no longer run them.",
			oneLineCode(after), plural(n, "test"), f.Path)})
	}
	return out
}

// expectedDataFindings reports golden files, snapshots and test data that
// were edited while no code changed. Adding or deleting such a file is
// left to the tests that read it.
func expectedDataFindings(files []File) []Finding {
	var out []Finding
	for _, f := range files {
		if !testsrc.IsTestData(f.Path) || f.Base == nil || f.New == nil || bytes.Equal(f.Base, f.New) {
			continue
		}
		out = append(out, Finding{Kind: AssertionChanged, Path: f.Path, Line: firstChange(f), Detail: fmt.Sprintf(
			"%s, data the tests compare against, changed although no code under test changed, so the tests were changed to pass rather than the code.", f.Path)})
	}
	return out
}

// behaviourChanged returns the changed files that can change behaviour:
// neither tests nor prose, and different in more than comments and layout
// where the language can be parsed.
func behaviourChanged(files []File) []string {
	var out []string
	for _, f := range files {
		if testsrc.IsTestPath(f.Path) || isDocPath(f.Path) || (!f.Unread && bytes.Equal(f.Base, f.New)) {
			continue
		}
		if f.Base != nil && f.New != nil && !f.Unread {
			a, okA := testsrc.Code(f.Path, f.Base)
			b, okB := testsrc.Code(f.Path, f.New)
			if okA && okB && a == b {
				continue
			}
		}
		out = append(out, f.Path)
	}
	return out
}

var (
	// bugWords include the suffixes of exception names: NullPointerException,
	// TypeError.
	bugWords = regexp.MustCompile(`(?i)\b(bugs?|broken|breaks|crash(es|ed|ing)?|panic(s|ked|king)?|fails?|failed|failing|failure|wrong|incorrect(ly)?|regression|traceback|segfault|hangs|throws|does ?n[o']t work|not working|unexpected(ly)?|instead of)\b|(exception|error)s?\b`)
	// testIssue: an issue whose title is about tests may rightly be solved
	// in the tests alone ("flaky test", "add tests for X").
	testIssue = regexp.MustCompile(`(?i)\b(tests?|testing|flaky|flakes?|specs?|coverage)\b`)
)

// reportsBug reports whether an issue reads as a bug in behaviour. It is
// a word test, not understanding: it errs towards "bug", so a change that
// touches only tests is shown to a reviewer.
func reportsBug(title, body string) bool {
	return bugWords.MatchString(title+"\n"+body) && !testIssue.MatchString(title)
}

// onlyTestsFindings reports a bug issue answered by changes to tests
// alone. The caller has checked that no behaviour changed.
func onlyTestsFindings(in Input, pairs []pair, removed, added []located) []Finding {
	if !reportsBug(in.IssueTitle, in.IssueBody) {
		return nil
	}
	for _, f := range in.Files {
		if bytes.Equal(f.Base, f.New) || !(testsrc.IsTestPath(f.Path) || testsChangedIn(f.Path, pairs, removed, added)) {
			continue
		}
		return []Finding{{Kind: OnlyTestsChanged, Path: f.Path, Line: firstChange(f), Detail: "Only tests changed, but the issue reports a bug in behaviour: a fix that changes no code under test is more likely a test bent to fit the bug than a fix."}}
	}
	return nil
}

// testsChangedIn reports whether a file outside the test paths (Rust's
// inline tests) had a test added, removed or edited.
func testsChangedIn(p string, pairs []pair, removed, added []located) bool {
	for _, r := range append(removed, added...) {
		if r.path == p {
			return true
		}
	}
	for _, pr := range pairs {
		if pr.next.path == p && pr.base.squashed != pr.next.squashed {
			return true
		}
	}
	return false
}
