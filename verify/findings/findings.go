// Package findings reads a finished change for hollow evidence: tests
// deleted, skipped or loosened, a test run that ran nothing, dependencies
// nobody reviewed, and a change larger or wider than its issue
// (docs/design.md §4.5, `findings`). The model cannot argue with it: Analyze is a pure
// function of the diff, the issue, the checks and what the model read, and
// it reads tests through verify/testsrc, the one reader of test
// sources, which new-test discovery uses too.
//
// The pipeline calls Analyze after the final verification, records the
// findings in the ledger and result.json, and lets Blocks decide whether
// the outcome may still be verified.
package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
)

// Kinds of finding produced here (docs/design.md §4.5). protected_path, secret,
// large_file and command_output are produced by other steps.
const (
	// TestsRemoved: a test function or test file was deleted, emptied or
	// renamed so that it is no longer a test.
	TestsRemoved = "tests_removed"
	// TestSkipped: a skip, ignore, xfail or .only marker was added, or a
	// build constraint, test configuration or check command now excludes
	// tests.
	TestSkipped = "test_skipped"
	// AssertionChanged: an existing test's expectations (or golden data)
	// were edited or deleted while no code under test changed.
	AssertionChanged = "assertion_changed"
	// OnlyTestsChanged: the issue reports a bug and only test files
	// changed.
	OnlyTestsChanged = "only_tests_changed"
	// NoTestsRan: a final test check exited 0 having run no test.
	NoTestsRan = "no_tests_ran"
	// NewDependency: a dependency was added or its version changed in a
	// manifest or a lockfile.
	NewDependency = "new_dependency"
	// Scope: the change is over a size limit, or touches a file unrelated
	// to anything the model read or the issue names.
	Scope = "scope"
	// HarnessChanged: the change adds or edits the test harness, the code
	// and configuration that decide how the tests run and what their
	// results say: a hook (a Go TestMain or test init, a pytest hook, a
	// Jest setup option; testsrc.Hooks) or a file testsrc.Harness calls
	// part of the harness (a conftest.py, runner configuration, a file
	// that shadows the runner, a test helper, vendored code, configuration
	// that names programs or registries). It blocks: a check that passed
	// with a harness the change wrote proves only what that harness says,
	// and the report lists these files first.
	HarnessChanged = "harness_changed"
	// UntrustedSetup: the final checks read what dependency setup after
	// the change installed while one of its commands ran code of the
	// changed tree (jobs/pipeline decides which commands do). It blocks:
	// the checks may have passed on dependencies the change chose.
	UntrustedSetup = "untrusted_setup"
)

// Finding is one fact a reviewer must look at. Its JSON form is an entry
// of result.json's "findings"; the type is the ledger's, whose finding
// event carries it.
type Finding = ledger.Finding

// Blocks reports whether a finding of this kind means the outcome cannot
// be verified (docs/design.md §4.5). new_dependency and scope, and kinds
// produced elsewhere, do not block: they are listed for review.
func Blocks(kind string) bool {
	switch kind {
	case TestsRemoved, TestSkipped, AssertionChanged, OnlyTestsChanged, NoTestsRan, UntrustedSetup, HarnessChanged:
		return true
	}
	return IsGate(kind)
}

// Blocking returns the findings whose kind blocks verified, in order,
// but the review's (IsGate) first: a known advisory or a risk the review
// found is what a reader must see before anything else; then
// UntrustedSetup: it says the checks themselves cannot be trusted.
func Blocking(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if Blocks(f.Kind) {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Compare(rank(a.Kind), rank(b.Kind))
	})
	return out
}

func rank(kind string) int {
	switch {
	case IsGate(kind):
		return 0
	case kind == UntrustedSetup:
		return 1
	}
	return 2
}

// File is one changed file. Base is nil when the change added the file,
// New is nil when it deleted it. A rename is a deletion plus an addition.
type File struct {
	Path      string
	Base, New []byte
	// Unread marks a file that exists after the change but whose content
	// was not read (too large, or a symlink). It is judged by its path
	// alone: it counts towards the scope, and as changed behaviour unless
	// it is a test or prose; its tests and dependencies are not read.
	Unread bool
}

// Check is one verification check as the pipeline ran it.
type Check struct {
	Name string
	// Baseline and Final are the commands run in each phase; empty when
	// the check did not exist in that phase.
	Baseline, Final string
	// ZeroTests is true when the final run exited 0 but executed no test,
	// as verify reads the runner's output.
	ZeroTests bool
	// BaselineRan and FinalRan are the tests each phase's run executed,
	// by name (see TestNames).
	BaselineRan, FinalRan TestNames
}

// Limits are the scope limits of .github/agent.yml. Zero or negative means
// no limit.
type Limits struct {
	MaxChangedFiles int
	MaxChangedLines int
}

// Input is everything Analyze looks at.
type Input struct {
	// Files are the changed files, as read for the commit.
	Files []File
	// IssueTitle and IssueBody are the issue text (already stripped of
	// hidden content).
	IssueTitle, IssueBody string
	// Checks are the verification checks at baseline and final.
	Checks []Check
	// Read lists the paths the model read (from the ledger); nil means it
	// read nothing, so every changed file the issue does not name is
	// listed as unrelated.
	Read []string
	// Limits bound the change's size.
	Limits Limits
}

// Analyze returns the findings of one change, sorted by path and line so
// the report and its golden files are stable. It never fails: a file it
// cannot parse yields what can be said without parsing it.
func Analyze(in Input) []Finding {
	known := in
	known.Files = nil
	for _, f := range in.Files {
		if !f.Unread {
			known.Files = append(known.Files, f)
		}
	}
	var out []Finding
	tests, pairs := testFindings(known, behaviourChanged(in.Files))
	out = append(out, tests...)
	out = append(out, configFindings(known.Files)...)
	out = append(out, harnessFindings(in.Files)...)
	out = append(out, checkFindings(in.Checks, pairs)...)
	out = append(out, dependencyFindings(known.Files, in.IssueTitle+"\n"+in.IssueBody)...)
	out = append(out, scopeFindings(in)...)
	return sortFindings(dedupe(out))
}

// dedupe drops a finding that two steps made alike.
func dedupe(fs []Finding) []Finding {
	seen := map[Finding]bool{}
	var out []Finding
	for _, f := range fs {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func sortFindings(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), strings.Compare(a.Kind, b.Kind))
	})
	return fs
}

// Summary is one line for the model, appended to the verify tool's result,
// so it can undo a weakened test before it finishes. It is empty when
// nothing blocks and nothing needs review.
func Summary(fs []Finding) string {
	if len(fs) == 0 {
		return ""
	}
	var blocking, review []string
	for _, f := range fs {
		where := f.Path
		if f.Line > 0 {
			where = fmt.Sprintf("%s:%d", f.Path, f.Line)
		}
		item := f.Kind
		if where != "" {
			item += " " + where
		}
		if Blocks(f.Kind) {
			blocking = append(blocking, item)
		} else {
			review = append(review, item)
		}
	}
	var parts []string
	if len(blocking) > 0 {
		parts = append(parts, fmt.Sprintf("the change cannot be reported as verified because of %s (%s); %s", plural(len(blocking), "finding"), capList(blocking, 5), advice(fs)))
	}
	if len(review) > 0 {
		parts = append(parts, fmt.Sprintf("a reviewer will be asked to check %s (%s)", plural(len(review), "finding"), capList(review, 5)))
	}
	return "findings: " + strings.Join(parts, "; ") + "."
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// capList joins at most max items and says how many more there are.
func capList(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(", and %d more", len(items)-max)
}

// advice says how to clear the blocking kinds present, in one clause.
func advice(fs []Finding) string {
	has := map[string]bool{}
	for _, f := range fs {
		has[f.Kind] = true
	}
	var out []string
	if has[TestsRemoved] || has[TestSkipped] {
		out = append(out, "restore the removed or skipped tests")
	}
	if has[AssertionChanged] {
		out = append(out, "put back the original expectations and fix the code instead")
	}
	if has[OnlyTestsChanged] {
		out = append(out, "fix the code the issue is about, not only its tests")
	}
	if has[NoTestsRan] {
		out = append(out, "make the test check run the tests")
	}
	if has[HarnessChanged] {
		out = append(out, "leave the test harness (hooks, runner configuration, helpers, vendored code) as it was")
	}
	return strings.Join(out, ", ")
}
