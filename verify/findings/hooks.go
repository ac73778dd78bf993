package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/verify/testsrc"
)

// harnessFindings reports each changed file of the test harness: first
// every hook a file gained or whose code changed (hookFindings, which says
// what the hook can do), then, for a file without such a hook, the file
// itself when testsrc.Harness, the one owner of the rule, calls it part of
// the harness and its harness part was added or changed. A deleted file
// is not reported: without it the runner falls back to its defaults, and
// a test that needed it fails. An unread file is judged by its path.
func harnessFindings(files []File) []Finding {
	out := hookFindings(files)
	hooked := map[string]bool{}
	for _, f := range out {
		hooked[f.Path] = true
	}
	for _, f := range files {
		if (f.New == nil && !f.Unread) || hooked[f.Path] {
			continue
		}
		role, changed := testsrc.HarnessChange(f.Path, f.Base, f.New)
		if f.Unread {
			role, changed = testsrc.Harness(f.Path, nil).Role, true
		}
		if role == "" || !changed {
			continue
		}
		verb := "edits"
		if f.Base == nil {
			verb = "adds"
		}
		out = append(out, Finding{Kind: HarnessChanged, Path: f.Path, Line: firstChange(f), Detail: fmt.Sprintf(
			"The change %s %s, which %s: the checks ran with it, so their pass is only as good as this file, which a reviewer must read.", verb, f.Path, role)})
	}
	return out
}

// hookFindings reports every hook (testsrc.Hooks: a Go TestMain or test
// init, a pytest hook, a Jest or Vitest setup option) that a changed file
// gained or whose code changed: a test run's pass is only as good as the
// code that decides whether its tests run. A removed hook is not
// reported: without it the runner runs every test.
func hookFindings(files []File) []Finding {
	var out []Finding
	for _, f := range files {
		before := map[string][]string{}
		for _, h := range testsrc.Hooks(f.Path, f.Base) {
			before[h.Name] = append(before[h.Name], squash(h.Text))
		}
		for _, h := range testsrc.Hooks(f.Path, f.New) {
			if slices.Contains(before[h.Name], squash(h.Text)) {
				continue
			}
			verb := "adds"
			if len(before[h.Name]) > 0 {
				verb = "edits"
			}
			out = append(out, Finding{Kind: HarnessChanged, Path: f.Path, Line: h.Line, Detail: hookDetail(h.Name, verb, f.Path)})
		}
	}
	return out
}

// pytestHooks say what the hooks that most decide a run can do.
var pytestHooks = map[string]string{
	"pytest_collection_modifyitems": "it can deselect, reorder or rewrite every test pytest collects",
	"pytest_ignore_collect":         "it can keep whole files and directories from being collected",
	"pytest_collect_file":           "it decides which files are read for tests and how",
	"pytest_pycollect_makeitem":     "it decides which functions and classes become tests",
	"pytest_runtestloop":            "it replaces the loop that runs the tests",
	"pytest_runtest_protocol":       "it can change how each test runs or whether it runs",
	"pytest_runtest_call":           "it can change how each test runs or whether it runs",
	"pytest_runtest_setup":          "it runs before each test and can skip it",
	"pytest_runtest_makereport":     "it can rewrite each test's result",
	"pytest_report_teststatus":      "it can change how each test's result is reported",
	"pytest_sessionstart":           "it runs before collection and can change or end the session",
	"pytest_sessionfinish":          "it runs after the tests and can change the session's exit status",
	"pytest_configure":              "it can change pytest's configuration, and with it which tests run",
}

func hookDetail(name, verb, p string) string {
	switch name {
	case "TestMain":
		return fmt.Sprintf("The change %s a TestMain in %s: a TestMain decides whether any test of its package runs (they run only if it calls m.Run and exits with its result), so the package's pass is only as good as this function.", verb, p)
	case "init":
		return fmt.Sprintf("The change %s an init function in the test file %s: it runs before every test of its package and can end the test binary before any test runs, so the package's pass is only as good as this function.", verb, p)
	case "pytest_plugins":
		return fmt.Sprintf("The change %s `pytest_plugins` in %s: the plugins it loads can change which tests pytest collects and what their results say, so the run's pass is only as good as those plugins.", verb, p)
	}
	if !strings.HasPrefix(name, "pytest_") {
		return fmt.Sprintf("The change %s the test-runner option `%s` in %s: the code it names runs around the tests and can skip them or change what their results say, so the run's pass is only as good as that code.", verb, name, p)
	}
	what, ok := pytestHooks[name]
	if !ok {
		what = "pytest calls it around collecting or running the tests, where it can change which tests run and what their results say"
	}
	return fmt.Sprintf("The change %s the pytest hook `%s` in %s: %s, so the run's pass is only as good as this hook.", verb, name, p, what)
}
