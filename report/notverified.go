package report

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
	"github.com/patchwright/patchwright/verify/testsrc"
)

// claimKind is what a phrase in the model's summary asserts.
type claimKind int

const (
	claimTests claimKind = iota
	claimLint
	claimBuild
	claimVerified
)

// claimPatterns find assertions a reader would take as evidence. Each is
// checked against the recorded final checks.
var claimPatterns = []struct {
	kind claimKind
	re   *regexp.Regexp
}{
	{claimTests, regexp.MustCompile(`(?i)\b(?:all\s+(?:the\s+)?(?:unit\s+)?tests?\s+(?:now\s+)?pass(?:es|ed|ing)?|(?:unit\s+)?tests?\s+(?:now\s+|still\s+)?pass(?:es|ed)?|test\s+suite\s+(?:now\s+)?pass(?:es|ed)?|(?:is|are|was|were|been|fully|thoroughly)\s+tested|tested\s+(?:it|the\s+change|locally|thoroughly))\b`)},
	{claimLint, regexp.MustCompile(`(?i)\b(?:lint(?:er|ing)?\s+(?:now\s+)?(?:pass(?:es|ed)?|is\s+clean|clean)|passes\s+(?:the\s+)?lint(?:er|ing)?|vet\s+(?:is\s+clean|pass(?:es|ed)?))\b`)},
	{claimBuild, regexp.MustCompile(`(?i)\b(?:(?:it\s+|code\s+)?(?:builds|compiles)(?:\s+cleanly|\s+successfully)?|build\s+(?:now\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)))\b`)},
	{claimVerified, regexp.MustCompile(`(?i)\b(?:verified|confirmed\s+(?:it|the\s+fix)\s+works)\b`)},
}

// backs says whether a passed check backs a claim of kind k; verify says
// what the check is. A test run backs "it builds" too: it compiled the
// code.
func backs(c verify.CheckResult, k claimKind) bool {
	switch r := c.Role(); k {
	case claimTests:
		return r == verify.RoleTest
	case claimLint:
		return r == verify.RoleLint
	case claimBuild:
		return r == verify.RoleBuild || r == verify.RoleTest
	}
	return false
}

var claimNoun = map[claimKind]string{
	claimTests: "no test command ran and passed after the change",
	claimLint:  "no lint command ran and passed after the change",
	claimBuild: "no build command ran and passed after the change",
}

// unbackedClaims returns a "Not verified" line for each claim in summary
// that no passed final check supports.
func unbackedClaims(summary string, final []verify.CheckResult, outcome verify.Outcome) []fact {
	var out []fact
	seen := map[string]bool{}
	for _, p := range claimPatterns {
		for _, m := range p.re.FindAllString(summary, 5) {
			if seen[strings.ToLower(m)] {
				continue
			}
			seen[strings.ToLower(m)] = true
			if p.kind == claimVerified {
				if outcome != verify.Verified {
					out = append(out, say(`The model's summary says "`, text(m), fmt.Sprintf(`": Patchwright's own checks did not verify the change (outcome: %s), so this is the model's claim only.`, outcome)))
				}
				continue
			}
			if !slices.ContainsFunc(final, func(c verify.CheckResult) bool { return c.Passed && backs(c, p.kind) }) {
				out = append(out, say(`The model's summary says "`, text(m), `": `+claimNoun[p.kind]+", so this is the model's claim only."))
			}
		}
	}
	return out
}

// languages are the languages whose changed files want a test run of
// their own, by file extension; verify says which language a check
// tested.
var languages = []struct {
	name string
	exts []string
}{
	{verify.LanguageGo, []string{".go"}},
	{verify.LanguageJS, []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs"}},
	{verify.LanguagePython, []string{".py"}},
	{verify.LanguageRust, []string{".rs"}},
	{verify.LanguageJava, []string{".java"}},
	{verify.LanguageRuby, []string{".rb"}},
	{verify.LanguagePHP, []string{".php"}},
}

// notVerified lists everything the run did not establish, in the order a
// reviewer needs it. It is never empty unless truly nothing is missing.
// The test-harness files the change wrote come first: every ✅ in the
// table was earned with them, so a reviewer reads them before trusting one.
func notVerified(in Input) []fact {
	var out []fact
	// What the review before publishing found that blocks (a known
	// advisory, a security or injection risk) comes before all else.
	for _, f := range in.Findings {
		if findings.IsGate(f.Kind) {
			out = append(out, findingFact(f))
		}
	}
	for _, f := range in.Findings {
		if f.Kind == findings.HarnessChanged {
			out = append(out, findingFact(f))
		}
	}
	for _, m := range in.Missing {
		out = append(out, say(spanned(m)))
	}
	out = append(out, notCommitted(in)...)
	out = append(out, foreignFact(in.Foreign)...)
	for _, f := range in.Findings {
		if f.Kind != findings.HarnessChanged && !findings.IsGate(f.Kind) {
			out = append(out, findingFact(f))
		}
	}
	out = append(out, coverage(in.Coverage)...)
	out = append(out, detectedNotVerified(in)...)
	out = append(out, dependencyNotVerified(in)...)
	out = append(out, secretsWithheldFacts(in.SetupSecretsWithheld)...)
	out = append(out, secretFileFacts(in.SetupSecretFiles)...)
	if in.Unbounded != "" {
		out = append(out, say("The work tree had no size limit, so a command could fill the worker's disk: ", text(strings.TrimSuffix(in.Unbounded, ".")), "."))
	}
	out = append(out, noLinterFact(in)...)
	out = append(out, refusedFacts(in)...)
	out = append(out, untestedLanguages(in)...)
	out = append(out, finalCheckFacts(in.Final)...)
	out = append(out, baselineFacts(in.Baseline)...)
	out = append(out, flakyFacts(in)...)
	out = append(out, uncoveredGo(in)...)
	out = append(out, newTestFacts(in.NewTests)...)
	out = append(out, testEditsUnnamed(in)...)
	out = append(out, unbackedClaims(in.Summary, in.Final, in.Outcome)...)
	return out
}

// noLinterFact says style was not checked when no check, before or after
// the change, was a linter and no missing-linter line already says so.
func noLinterFact(in Input) []fact {
	var out []fact
	if !slices.ContainsFunc(append(in.Final, in.Baseline...), func(c verify.CheckResult) bool {
		return c.Role() == verify.RoleLint
	}) && !slices.ContainsFunc(in.Missing, verify.SaysNoLinter) {
		out = append(out, say("No linter is configured in .github/agent.yml or detected; style was not checked."))
	}
	return out
}

// finalCheckFacts names the final checks that could not run, did not run,
// or ran no tests.
func finalCheckFacts(final []verify.CheckResult) []fact {
	var out []fact
	for _, c := range final {
		switch {
		case c.CouldNotRun:
			out = append(out, say(value(c.Name), " (", value(c.Command), ") could not run after the change: ", text(c.NotRunReason), ", so what it covers was not checked."))
		case !c.Ran:
			out = append(out, say(value(c.Name), " (", value(c.Command), ") did not run after the change: ", text(c.NotRunReason), "."))
		case c.ZeroTests:
			out = append(out, say(value(c.Name), " ran no tests (", text(c.ZeroTestsDetail), "); its pass shows nothing."))
		}
	}
	return out
}

// baselineFacts names the baseline checks that already failed or could
// not run, so they cannot show what the change broke.
func baselineFacts(baseline []verify.CheckResult) []fact {
	var out []fact
	for _, b := range baseline {
		if b.Failed() && !b.Flaky {
			out = append(out, say(value(b.Name), " was already failing before the change (", failFact(b), "), so the baseline cannot show whether the change broke anything it covers."))
		}
		if !b.Ran && b.NotRunReason != "" {
			out = append(out, say(value(b.Name), " could not run before the change (", text(b.NotRunReason), "), so there is nothing to compare its result with."))
		}
	}
	return out
}

// flakyFacts names each flaky check, baseline first, then final.
func flakyFacts(in Input) []fact {
	var out []fact
	for _, c := range append(slices.Clone(in.Baseline), in.Final...) {
		if c.Flaky {
			out = append(out, say(value(c.Name), " is flaky "+phaseText(c.Phase)+": "+c.RunsText()+"; it is not counted as passed."))
		}
	}
	return out
}

// newTestFacts says, for each new or changed test, why it does not show
// the fix when its run against the original code does not.
func newTestFacts(tests []verify.NewTestResult) []fact {
	var out []fact
	for _, t := range tests {
		switch t.Status {
		case verify.PassesBefore:
			if !t.LiteralOnly { // a new message is not meant to show the fix
				out = append(out, say(testLead(t.NewTest), " also passes without the change, so it does not demonstrate the fix."))
			}
		case verify.BuildFailsBefore:
			out = append(out, say(testLead(t.NewTest), " does not compile against the original code (it uses something the change added), so it cannot show that the old behaviour was wrong."))
		case verify.NotRunBefore:
			f := say(testLead(t.NewTest), " could not be run against the original code, so it is not shown to fail without the change")
			if t.Reason != "" {
				f = append(f, ": ", text(strings.TrimSuffix(t.Reason, ".")))
			}
			out = append(out, append(f, "."))
		case verify.CannotShow:
			out = append(out, say(testLead(t.NewTest), " ", text(strings.TrimSuffix(t.Reason, ".")), "."))
		}
	}
	return out
}

// testEditsUnnamed names each test file the change added lines to in
// which no new or changed test was found: the edit is outside the tests
// (a table of cases they share, a helper), so no run on the original
// code tried it, and nothing says whether it shows the fix. Only when a
// test command ran after the change: else no test was looked for.
func testEditsUnnamed(in Input) []fact {
	if !slices.ContainsFunc(in.Final, func(c verify.CheckResult) bool { return c.Ran && c.Role() == verify.RoleTest }) {
		return nil
	}
	var out []fact
	for _, f := range in.Files {
		if f.Added == 0 || !testsrc.IsTestPath(f.Path) || testsrc.IsTestData(f.Path) {
			continue
		}
		if slices.ContainsFunc(in.NewTests, func(t verify.NewTestResult) bool { return t.File == f.Path }) {
			continue
		}
		out = append(out, say(value(f.Path), " changed, but no new or changed test was found in it (the edit is outside the tests Patchwright can name, such as cases they share or a helper), so the edit was not run against the original code and is not shown to fail without the change."))
	}
	return out
}

// testLead names a test the change added or changed, as a reviewer
// would: new, changed, or renamed or moved with where it came from.
func testLead(t verify.NewTest) fact {
	switch {
	case t.RenamedFrom != "" && t.MovedFrom != "":
		return say("The renamed test ", value(t.Name), " (was ", value(t.RenamedFrom), " in ", value(t.MovedFrom), ")")
	case t.RenamedFrom != "":
		return say("The renamed test ", value(t.Name), " (was ", value(t.RenamedFrom), ")")
	case t.MovedFrom != "":
		return say("The moved test ", value(t.Name), " (was in ", value(t.MovedFrom), ")")
	case t.Added:
		return say("The new test ", value(t.Name))
	}
	return say("The changed test ", value(t.Name))
}

// secretsWithheldFacts say that setup ran without the setup-only
// secrets, so what needed them (a private registry) was not fetched.
func secretsWithheldFacts(names []string) []fact {
	if len(names) == 0 {
		return nil
	}
	f := say("Setup ran without the setup-only secrets (")
	for i, n := range names {
		if i > 0 {
			f = append(f, ", ")
		}
		f = append(f, value(n))
	}
	return []fact{append(f, "): the tree is the agent branch, code a model wrote, not the default branch's, so nothing setup fetched with them (a private registry) is in the checks.")}
}

// notCommitted explains a change that exists but was not committed.
func notCommitted(in Input) []fact {
	switch in.NotCommitted {
	case NotCommittedSecret:
		f := say("The change was not committed: it adds what looks like a secret")
		for i, p := range in.Secrets {
			sep := ", "
			if i == 0 {
				sep = " ("
			}
			if i == 3 {
				f = append(f, fmt.Sprintf(", and %d more", len(in.Secrets)-3))
				break
			}
			if p.Line > 0 {
				f = append(f, sep+"rule ", value(p.Rule), " in ", value(p.Path), fmt.Sprintf(" line %d", p.Line))
			} else {
				f = append(f, sep+"rule ", value(p.Rule), " in the name ", value(p.Path))
			}
		}
		if len(in.Secrets) > 0 {
			f = append(f, ")")
		}
		return []fact{append(f, ".")}
	case NotCommittedStopped:
		return []fact{say("The run was stopped before the model finished, so its change is unfinished and was not committed.")}
	case NotCommittedError:
		return []fact{say("The run failed before it could finish, so its change was not committed.")}
	}
	return nil
}

// findingFact is one finding: where, then why.
func findingFact(f Finding) fact {
	var out fact
	switch {
	case f.Path != "" && f.Line > 0:
		out = say(value(f.Path), fmt.Sprintf(" line %d: ", f.Line))
	case f.Path != "":
		out = say(value(f.Path), ": ")
	}
	return append(out, spanned(f.Detail))
}

// coverage says, for a repository of several projects, which checks
// cover the change and which paths no check covers.
func coverage(cov *verify.Coverage) []fact {
	if cov == nil {
		return nil
	}
	var out []fact
	if len(cov.Checks) > 0 && len(cov.Untouched) > 0 {
		f := say("The change is covered by ")
		for i, c := range cov.Checks {
			if i > 0 {
				f = append(f, ", ")
			}
			f = append(f, value(c))
		}
		f = append(f, "; the checks of ")
		for i, d := range cov.Untouched {
			if i > 0 {
				f = append(f, ", ")
			}
			if d == "." {
				f = append(f, "the root project")
			} else {
				f = append(f, value(d))
			}
		}
		out = append(out, append(f, " ran but do not cover it."))
	}
	for _, p := range cov.Uncovered {
		out = append(out, say(value(p), " is in no detected project; no check covers it."))
	}
	return out
}

func phaseText(p verify.Phase) string {
	if p == verify.Baseline {
		return "before the change"
	}
	return "after the change"
}

// untestedLanguages names each language the change touched that no test
// command ran for.
func untestedLanguages(in Input) []fact {
	var out []fact
	for _, lang := range languages {
		touched := slices.ContainsFunc(in.Files, func(f FileStat) bool { return slices.Contains(lang.exts, path.Ext(f.Path)) })
		if !touched {
			continue
		}
		tested := slices.ContainsFunc(in.Final, func(c verify.CheckResult) bool {
			return c.Ran && c.TestLanguage() == lang.name
		})
		if !tested {
			out = append(out, say(fmt.Sprintf("The change touches %s files but no %s test command ran after it.", lang.name, lang.name)))
		}
	}
	return out
}

// uncoveredGo names changed Go packages that no executed go test covered:
// those go test reported without test files, and those it did not report.
func uncoveredGo(in Input) []fact {
	if in.GoModule == "" {
		return nil
	}
	var summary *verify.GoTestSummary
	for _, c := range in.Final {
		if c.Ran && c.GoTests() != nil && c.TestLanguage() == verify.LanguageGo {
			summary = c.GoTests()
		}
	}
	if summary == nil {
		return nil
	}
	var out []fact
	seen := map[string]bool{}
	for _, f := range in.Files {
		if path.Ext(f.Path) != ".go" || strings.HasSuffix(f.Path, "_test.go") {
			continue
		}
		dir := path.Dir(f.Path)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		pkg := in.GoModule
		if dir != "." {
			pkg += "/" + dir
		}
		switch {
		case slices.Contains(summary.NoTestFiles, pkg):
			out = append(out, say(value(dir), " has no tests; the change to it was only compiled."))
		case !slices.Contains(summary.PackagesOK, pkg) && !slices.Contains(summary.PackagesFailed, pkg):
			out = append(out, say(value(dir), " was not reported by any test run, so no test is known to cover the change to it."))
		}
	}
	return out
}

// NotVerified lists what the run did not establish, as the body's "Not
// verified" section does, for result.json's not_verified: the same facts
// as plain text, each value in backticks. It is empty only when truly
// nothing is missing.
func NotVerified(in Input) []string {
	facts := notVerified(in)
	out := make([]string, len(facts))
	for i, f := range facts {
		out[i] = f.plain()
	}
	return out
}

// maxRefusedShown bounds the refused connections "Not verified" names.
const maxRefusedShown = 5

// refusedFacts names the connections setup was refused: those to
// addresses no repository may reach always (network.allow cannot fix
// them), the others when a check then failed: a missing download is the
// likely cause, and network.allow in .github/agent.yml the fix.
func refusedFacts(in Input) []fact {
	out := closedRangeFacts(in)
	failed := slices.ContainsFunc(append(slices.Clone(in.Baseline), in.Final...), func(c verify.CheckResult) bool {
		return c.Failed() || c.CouldNotRun
	})
	if len(in.Refused) == 0 || !failed {
		return out
	}
	f := say("The setup network refused connections, and a check failed; if the check needed what they would have fetched, add the hosts to ", value("network.allow"), " in .github/agent.yml: ")
	for i, r := range in.Refused {
		if i == maxRefusedShown {
			f = append(f, fmt.Sprintf(", and %d more", len(in.Refused)-maxRefusedShown))
			break
		}
		if i > 0 {
			f = append(f, ", ")
		}
		f = append(f, value(fmt.Sprintf("%s:%d", r.Host, r.Port)))
		if strings.HasPrefix(r.Reason, "bypassed the proxy") {
			// network.allow opens the proxy, not the firewall.
			f = append(f, " around the proxy, which no allowlist lets through")
		}
		if r.Command != "" {
			f = append(f, " (", r.Phase, " command ", value(r.Command), ")")
		}
	}
	if in.RefusedDropped != "" {
		f = append(f, "; ", in.RefusedDropped)
	}
	return append(out, append(f, "."))
}

// closedRangeFacts names the hosts setup was refused because they are, or
// resolve to, private, link-local or the worker's Docker networks'
// addresses: only the operator opens those.
func closedRangeFacts(in Input) []fact {
	var f fact
	n := 0
	for _, r := range in.Refused {
		if !egress.InClosedRange(r) {
			continue
		}
		if n++; n > maxRefusedShown {
			continue
		}
		if n > 1 {
			f = append(f, ", ")
		}
		f = append(f, value(fmt.Sprintf("%s:%d", r.Host, r.Port)))
	}
	if n == 0 {
		return nil
	}
	if n > maxRefusedShown {
		f = append(f, fmt.Sprintf(", and %d more", n-maxRefusedShown))
	}
	head := say("The setup network refused hosts that are, or resolve to, private, link-local or container-network addresses, which no repository's ", value("network.allow"), " reaches (the operator may open a range with ", value("PATCHWRIGHT_EGRESS_ALLOW_CIDRS"), "): ")
	return []fact{append(append(head, f...), ".")}
}
