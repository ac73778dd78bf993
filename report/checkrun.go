package report

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchwright/patchwright/verify"
)

// AnnotationBatch is how many annotations GitHub accepts in one check-run
// request.
const AnnotationBatch = 50

// maxAnnotations caps the annotations of one check; past it a reviewer
// reads the log.
const maxAnnotations = 500

// Annotation is a check-run annotation with go-github's field names.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	AnnotationLevel string `json:"annotation_level"` // "failure", "warning" or "notice"
	Message         string `json:"message"`
}

// CheckRunOutput is a check run's output: title, Markdown summary and
// annotations in batches of AnnotationBatch.
type CheckRunOutput struct {
	// Conclusion is GitHub's conclusion: "success", "failure" or
	// "neutral" (did not run, or flaky).
	Conclusion  string
	Title       string
	Summary     string
	Annotations [][]Annotation
}

var (
	// "path/file.go:12:5: message" (compilers, vet) or "file_test.go:40:
	// message" (t.Error output, relative to the package directory).
	locationRE = regexp.MustCompile(`^\s*((?:\./)?[\w./+-]+\.\w+):(\d+)(?::(\d+))?: (.+)$`)
	pkgEndRE   = regexp.MustCompile(`^(?:FAIL|ok)\s+(\S+)`)
)

// Annotations parses file:line locations from a check's output. Paths are
// made relative to the repository root; test-log lines name only a file,
// so their package comes from the go test result line that follows, and
// module maps it to a directory. Anything outside the repository is
// dropped.
func Annotations(output, module string) []Annotation {
	var out, pending []Annotation
	seen := map[string]bool{}
	add := func(a Annotation) {
		key := fmt.Sprintf("%s:%d:%s", a.Path, a.StartLine, a.Message)
		if !seen[key] && len(out) < maxAnnotations {
			seen[key] = true
			out = append(out, a)
		}
	}
	for _, line := range strings.Split(output, "\n") {
		if m := pkgEndRE.FindStringSubmatch(line); m != nil {
			dir, ok := packageDir(m[1], module)
			for _, a := range pending {
				if ok {
					a.Path = path.Join(dir, a.Path)
					add(a)
				}
			}
			pending = nil
			continue
		}
		m := locationRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n < 1 {
			continue
		}
		p := path.Clean(strings.TrimPrefix(m[1], "/workspace/"))
		if path.IsAbs(p) || strings.HasPrefix(p, "../") || p == ".." {
			continue
		}
		a := Annotation{Path: p, StartLine: n, EndLine: n, AnnotationLevel: "failure", Message: strings.TrimSpace(m[4])}
		if !strings.Contains(p, "/") && strings.HasPrefix(line, " ") {
			pending = append(pending, a) // a test log line: package unknown yet
			continue
		}
		add(a)
	}
	return out
}

// packageDir maps an import path inside module to its directory.
func packageDir(pkg, module string) (string, bool) {
	if module == "" {
		return "", false
	}
	if pkg == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(pkg, module+"/")
	return rest, ok
}

// batches splits annotations into requests GitHub accepts.
func batches(a []Annotation) [][]Annotation {
	var out [][]Annotation
	for len(a) > 0 {
		n := min(AnnotationBatch, len(a))
		out = append(out, a[:n])
		a = a[n:]
	}
	return out
}

// checkRunData is what the check_run template sees.
type checkRunData struct {
	Final, Baseline *verify.CheckResult
	Output          string
	OutputCut       bool
	LogURL          string
}

// CheckRun renders the output of the check run for one check, from its
// final result and, when there is one, its baseline result. module maps
// go test packages to directories for annotations.
func CheckRun(final verify.CheckResult, baseline *verify.CheckResult, module, logURL string) (CheckRunOutput, error) {
	out := CheckRunOutput{Conclusion: "failure", Title: checkTitle(final, baseline)}
	switch {
	case !final.Ran || final.Flaky:
		out.Conclusion = "neutral"
	case final.Passed:
		out.Conclusion = "success"
	}
	d := checkRunData{Final: &final, Baseline: baseline, LogURL: safeURL(logURL)}
	for _, budget := range []int{60000, 20000, 4000, 0} {
		d.Output, d.OutputCut = tail(final.Output, budget)
		s, err := execute("check_run", d)
		if err != nil {
			return CheckRunOutput{}, err
		}
		if len(s) <= MaxCheckRunSummary {
			out.Summary = s
			break
		}
	}
	if final.Failed() {
		out.Annotations = batches(Annotations(final.Output, module))
	}
	return out, nil
}

func checkTitle(f verify.CheckResult, b *verify.CheckResult) string {
	var s string
	switch {
	case !f.Ran:
		s = "not run: " + f.NotRunReason
	case f.Flaky:
		s = "flaky: " + f.RunsText()
	case f.Passed:
		s = "passed"
	default:
		s = "failed (" + stripMarkdown(failText(f)) + ")"
	}
	if b != nil {
		switch {
		case !b.Ran:
			s += "; not run before the change"
		case b.Passed:
			s += "; passed before the change"
		default:
			s += "; failed before the change too"
		}
	}
	return s
}

// stripMarkdown removes the code-span backticks failText adds: a title is
// plain text.
func stripMarkdown(s string) string { return strings.ReplaceAll(s, "`", "") }
