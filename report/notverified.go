package report

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/agent/verify"
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

// checkKind says which claims a passed check backs.
func backs(c verify.CheckResult, k claimKind) bool {
	name, cmd := strings.ToLower(c.Name), strings.ToLower(c.Command)
	switch k {
	case claimTests:
		return strings.Contains(name, "test") || strings.Contains(cmd, "test")
	case claimLint:
		return strings.Contains(name, "lint") || strings.Contains(name, "vet") || strings.Contains(cmd, "lint")
	case claimBuild:
		return strings.Contains(name, "build") || strings.Contains(name, "compile") ||
			strings.Contains(cmd, "build") || strings.Contains(cmd, "test")
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
func unbackedClaims(summary string, final []verify.CheckResult, outcome verify.Outcome) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range claimPatterns {
		for _, m := range p.re.FindAllString(summary, 5) {
			if seen[strings.ToLower(m)] {
				continue
			}
			seen[strings.ToLower(m)] = true
			if p.kind == claimVerified {
				if outcome != verify.Verified {
					out = append(out, fmt.Sprintf("The model's summary says %q: Patchwright's own checks did not verify the change (outcome: %s), so this is the model's claim only.", plain(m), outcome))
				}
				continue
			}
			if !slices.ContainsFunc(final, func(c verify.CheckResult) bool { return c.Passed && backs(c, p.kind) }) {
				out = append(out, fmt.Sprintf("The model's summary says %q: %s, so this is the model's claim only.", plain(m), claimNoun[p.kind]))
			}
		}
	}
	return out
}

// languages maps file extensions to the words a test command for that
// language contains.
var languages = []struct {
	name  string
	exts  []string
	tests []string
}{
	{"Go", []string{".go"}, []string{"go test"}},
	{"JavaScript/TypeScript", []string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs"}, []string{"npm test", "npm run test", "jest", "vitest", "mocha", "yarn test", "pnpm test"}},
	{"Python", []string{".py"}, []string{"pytest", "unittest", "tox"}},
	{"Rust", []string{".rs"}, []string{"cargo test"}},
	{"Java", []string{".java"}, []string{"mvn", "gradle"}},
}

// notVerified lists everything the run did not establish, in the order a
// reviewer needs it. It is never empty unless truly nothing is missing.
func notVerified(in Input) []string {
	var out []string
	for _, m := range in.Missing {
		out = append(out, item(m))
	}
	if !slices.ContainsFunc(append(in.Final, in.Baseline...), func(c verify.CheckResult) bool {
		return strings.Contains(strings.ToLower(c.Name+" "+c.Command), "lint")
	}) && !slices.ContainsFunc(in.Missing, func(s string) bool { return strings.Contains(s, "lint") }) {
		out = append(out, "No linter is configured in .github/agent.yml or detected; style was not checked.")
	}
	out = append(out, untestedLanguages(in)...)
	for _, c := range in.Final {
		switch {
		case c.CouldNotRun:
			out = append(out, fmt.Sprintf("%s (%s) could not run after the change: %s, so what it covers was not checked.", code(c.Name), code(c.Command), plain(c.NotRunReason)))
		case !c.Ran:
			out = append(out, fmt.Sprintf("%s (%s) did not run after the change: %s.", code(c.Name), code(c.Command), plain(c.NotRunReason)))
		case c.ZeroTests:
			out = append(out, fmt.Sprintf("%s ran no tests (%s); its pass shows nothing.", code(c.Name), plain(c.ZeroTestsDetail)))
		}
	}
	for _, b := range in.Baseline {
		if b.Failed() && !b.Flaky {
			out = append(out, fmt.Sprintf("%s was already failing before the change (%s), so the baseline cannot show whether the change broke anything it covers.", code(b.Name), failText(b)))
		}
		if !b.Ran && b.NotRunReason != "" {
			out = append(out, fmt.Sprintf("%s could not run before the change (%s), so there is nothing to compare its result with.", code(b.Name), plain(b.NotRunReason)))
		}
	}
	for _, c := range append(slices.Clone(in.Baseline), in.Final...) {
		if c.Flaky {
			out = append(out, fmt.Sprintf("%s is flaky %s: %s; it is not counted as passed.", code(c.Name), phaseText(c.Phase), c.RunsText()))
		}
	}
	out = append(out, uncoveredGo(in)...)
	for _, t := range in.NewTests {
		switch t.Status {
		case verify.PassesBefore:
			out = append(out, fmt.Sprintf("The new test %s also passes without the change, so it does not demonstrate the fix.", code(t.Name)))
		case verify.BuildFailsBefore:
			out = append(out, fmt.Sprintf("The new test %s does not compile against the original code (it uses something the change added), so it cannot show that the old behaviour was wrong.", code(t.Name)))
		case verify.NotRunBefore:
			line := fmt.Sprintf("The new test %s could not be run against the original code, so it is not shown to fail without the change", code(t.Name))
			if t.Reason != "" {
				line += ": " + plain(t.Reason)
			}
			out = append(out, line+".")
		case verify.CannotShow:
			out = append(out, fmt.Sprintf("The new test %s %s.", code(t.Name), plain(strings.TrimSuffix(t.Reason, "."))))
		}
	}
	out = append(out, unbackedClaims(in.Summary, in.Final, in.Outcome)...)
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
func untestedLanguages(in Input) []string {
	var out []string
	for _, lang := range languages {
		touched := slices.ContainsFunc(in.Files, func(f FileStat) bool { return slices.Contains(lang.exts, path.Ext(f.Path)) })
		if !touched {
			continue
		}
		tested := slices.ContainsFunc(in.Final, func(c verify.CheckResult) bool {
			return c.Ran && slices.ContainsFunc(lang.tests, func(w string) bool { return strings.Contains(c.Command, w) })
		})
		if !tested {
			out = append(out, fmt.Sprintf("The change touches %s files but no %s test command ran after it.", lang.name, lang.name))
		}
	}
	return out
}

// uncoveredGo names changed Go packages that no executed go test covered:
// those go test reported without test files, and those it did not report.
func uncoveredGo(in Input) []string {
	if in.GoModule == "" {
		return nil
	}
	var summary *verify.GoTestSummary
	for _, c := range in.Final {
		if c.Ran && c.GoTests() != nil && strings.HasPrefix(c.Command, "go test") {
			summary = c.GoTests()
		}
	}
	if summary == nil {
		return nil
	}
	var out []string
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
			out = append(out, fmt.Sprintf("%s has no tests; the change to it was only compiled.", code(dir)))
		case !slices.Contains(summary.PackagesOK, pkg) && !slices.Contains(summary.PackagesFailed, pkg):
			out = append(out, fmt.Sprintf("%s was not reported by any test run, so no test is known to cover the change to it.", code(dir)))
		}
	}
	return out
}

// NotVerified lists what the run did not establish, as the body's "Not
// verified" section does, for result.json's not_verified. It is empty only
// when truly nothing is missing.
func NotVerified(in Input) []string { return notVerified(in) }
