package verify

import (
	"strings"
	"testing"
)

func TestCouldNotRun(t *testing.T) {
	for _, c := range []struct {
		file string
		exit int
		want string
	}{
		{"sh_not_found.txt", 127, "`python` not found in the image"},
		{"bash_not_found.txt", 127, "`nosuchtool` not found in the image"},
		{"npm_jest_not_found.txt", 127, "`jest` not found in the image"},
		{"sh_not_executable.txt", 126, "`./noexec.sh` cannot be executed (permission denied)"},
		{"pytest_not_installed.txt", 1, "`pytest` is not installed for `python3` in the image"},
		{"go_toolchain_missing.txt", 1, "the Go toolchain `go1.99.0` that go.mod asks for is not in the image and cannot be downloaded"},
		{"go_cache_not_writable.txt", 1, "the Go build cache `/tmp/rocache/go-build` cannot be written in the sandbox (permission denied)"},
		{"make_not_found.txt", 2, "`nosuchpython` not found in the image"},
		{"make_sh_not_found.txt", 2, "`nosuchpython` not found in the image"},
		{"maven_offline_missing.txt", 1, "Maven is offline and `org.apache.maven.plugins:maven-resources-plugin:jar:debian` is not in its local repository"},
	} {
		t.Run(c.file, func(t *testing.T) {
			got := couldNotRun(c.exit, outputFixture(t, c.file))
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("couldNotRun = %q, want %q", got, c.want)
			}
		})
	}
}

// TestCouldNotRunNotATestFailure: failing tests, and a "not found" a test
// printed itself, are failures, never "could not run".
// TestCouldNotRunRubyFramework: ruby/ostruct's new test, run alone on the
// original tree through bundle exec, could not load test-unit at all; that
// is a run that could not start, not a test that does not compile. A
// project file the test requires is the test's own failure.
func TestCouldNotRunRubyFramework(t *testing.T) {
	out := "test/ostruct/test_ostruct.rb:2:in `require': cannot load such file -- test/unit (LoadError)\n\tfrom test/ostruct/test_ostruct.rb:2:in `<main>'\n"
	if got, want := couldNotRun(1, out), "Ruby cannot load the test framework `test/unit` (LoadError): its gem is not installed in the image or not in the bundle"; got != want {
		t.Errorf("couldNotRun = %q, want %q", got, want)
	}
	own := "test/slug_test.rb:3:in `require_relative': cannot load such file -- /w/lib/slug/nil (LoadError)\n"
	if got := couldNotRun(1, own); got != "" {
		t.Errorf("the project's own file: %q", got)
	}
}

func TestCouldNotRunNotATestFailure(t *testing.T) {
	for _, tc := range parserCases {
		if got := couldNotRun(1, outputFixture(t, tc.file)); got != "" {
			t.Errorf("%s exit 1: %q", tc.file, got)
		}
	}
	for name, c := range map[string]struct {
		exit int
		out  string
	}{
		"exit 0 with the words":   {0, "sh: 1: python: not found\n"},
		"exit 1 with the words":   {1, "sh: 1: helper: not found\nFAIL\n"},
		"make with another error": {2, "sh: 1: helper: not found\nmake: *** [Makefile:2: test] Error 1\n"},
		"test's own ImportError":  {1, "E   ModuleNotFoundError: No module named 'yaml'\n"},
		"late no module line":     {1, strings.Repeat("x\n", 20) + "/usr/bin/python3: No module named pytest\n"},
		"go test of a toolchain?": {1, strings.Repeat("=== RUN\n", 20) + "go: download go1.99.0 for linux/amd64: toolchain not available\n"},
	} {
		if got := couldNotRun(c.exit, c.out); got != "" {
			t.Errorf("%s: %q", name, got)
		}
	}
}

func TestCouldNotRunBareExitCodes(t *testing.T) {
	if got := couldNotRun(127, "something odd\n"); !strings.Contains(got, "exit 127") {
		t.Errorf("127: %q", got)
	}
	if got := couldNotRun(126, ""); !strings.Contains(got, "exit 126") {
		t.Errorf("126: %q", got)
	}
}

func TestQuoteNameStripsControl(t *testing.T) {
	if got := quoteName("/usr/bin/py`\x1bthon"); got != "`python`" {
		t.Errorf("quoteName = %q", got)
	}
	if got := quoteName(strings.Repeat("a", 100)); len([]rune(got)) > 64 {
		t.Errorf("quoteName kept %d runes", len([]rune(got)))
	}
}

// TestDescribe is the runner's reading of one run: which parser, could
// not run, zero tests.
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		name, cmd, file string
		kind            TestKind
		exit            int
		couldNotRun     bool
		zero            string
		summary         bool
		goTests         bool
	}{
		{name: "python missing", cmd: "python -m pytest", file: "sh_not_found.txt", exit: 127, couldNotRun: true},
		{name: "pytest exit 5", cmd: "python -m pytest", file: "pytest_no_tests.txt", exit: 5, zero: "pytest collected no tests (exit 5)", summary: true},
		{name: "pytest deselected", cmd: "python -m pytest -k x", file: "pytest_deselected.txt", exit: 5, zero: "exit 5", summary: true},
		{name: "pytest failing", cmd: "python -m pytest", file: "pytest_fail.txt", exit: 1, summary: true},
		{name: "go no test files", cmd: "go test ./...", file: "go_no_test_files.txt", exit: 0, zero: "go test ran no test", summary: true, goTests: true},
		{name: "go no tests to run", cmd: "go test -run XXX ./...", file: "go_notests.txt", exit: 0, zero: "go test ran no test", summary: true, goTests: true},
		{name: "go passing", cmd: "go test ./...", file: "go_pass.txt", exit: 0, summary: true, goTests: true},
		{name: "mocha 0 passing", cmd: "npm test", kind: KindMocha, file: "mocha_nomatch.txt", exit: 0, zero: "mocha ran no test", summary: true},
		{name: "node:test all skipped", cmd: "npm test", kind: KindNodeTest, file: "nodetest_default_nomatch.txt", exit: 0, zero: "node:test ran no test (4 skipped)", summary: true},
		{name: "jest no tests exit 1", cmd: "npm test", kind: KindJest, file: "jest_no_tests.txt", exit: 1, zero: "jest ran no test", summary: true},
		{name: "jest suite error", cmd: "npm test", kind: KindJest, file: "jest_suite_error.txt", exit: 1, summary: true},
		{name: "cargo filtered", cmd: "cargo test --offline x", file: "cargo_nomatch.txt", exit: 0, zero: "cargo ran no test", summary: true},
		{name: "maven no tests", cmd: "mvn -B -o test", file: "maven_no_tests.txt", exit: 0, zero: "maven ran no test", summary: true},
		{name: "bundler without the gem", cmd: "bundle exec rspec", file: "bundler_missing_gem.txt", exit: 1, couldNotRun: true},
		{name: "tape as npm test without kind", cmd: "npm test", file: "tape_pass.txt", exit: 0},
		{name: "TAP is not go", cmd: "go test ./...", file: "tape_pass.txt", exit: 0, goTests: false},
		{name: "mocha exit 1 is not zero", cmd: "mocha", file: "mocha_nomatch.txt", exit: 1, summary: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := CheckResult{Command: c.cmd, Ran: true, ExitCode: c.exit, Passed: c.exit == 0}
			describe(&res, Check{Run: c.cmd, Kind: c.kind}, outputFixture(t, c.file), nil)
			if res.CouldNotRun != c.couldNotRun || res.CouldNotRun == res.Ran {
				t.Errorf("CouldNotRun = %v, Ran = %v (%q)", res.CouldNotRun, res.Ran, res.NotRunReason)
			}
			if res.ZeroTests != (c.zero != "") || !strings.Contains(res.ZeroTestsDetail, c.zero) {
				t.Errorf("ZeroTests = %v %q, want %q", res.ZeroTests, res.ZeroTestsDetail, c.zero)
			}
			if (res.Summary != nil) != c.summary {
				t.Errorf("Summary = %+v, want present %v", res.Summary, c.summary)
			}
			if (res.GoTests() != nil) != c.goTests {
				t.Errorf("Go packages = %+v, want present %v", res.GoTests(), c.goTests)
			}
		})
	}
}

func TestNotRunText(t *testing.T) {
	cnr := CheckResult{CouldNotRun: true, NotRunReason: "`python` not found in the image"}
	if got := cnr.NotRunText(); got != "could not run: `python` not found in the image" {
		t.Errorf("could not run: %q", got)
	}
	if got := (CheckResult{NotRunReason: "build failed"}).NotRunText(); got != "not run: build failed" {
		t.Errorf("not run: %q", got)
	}
	if got := (CheckResult{Ran: true}).NotRunText(); got != "" {
		t.Errorf("ran: %q", got)
	}
}

// TestCouldNotRunNamesProjectPaths: a program missing at a path inside
// the project is named whole, as what setup did not install, not as a
// program the image lacks.
func TestCouldNotRunNamesProjectPaths(t *testing.T) {
	for out, want := range map[string]string{
		"sh: 1: vendor/bin/phpunit: not found\n":            "`vendor/bin/phpunit` does not exist in the work tree (the project's setup",
		"/bin/sh: 1: ./node_modules/.bin/jest: not found\n": "`node_modules/.bin/jest` does not exist in the work tree",
		"sh: 1: /usr/local/bin/phpunit: not found\n":        "`phpunit` not found in the image",
		"sh: 1: ../x/bin/tool: not found\n":                 "`tool` not found in the image",
	} {
		if got := couldNotRun(127, out); !strings.HasPrefix(got, want) {
			t.Errorf("couldNotRun(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestRubyMissingGem: roda's new spec, run alone on the original tree
// without the rack gem, stopped at a LoadError of rack: that run could not
// start for want of a gem, named, and is no compile failure. A feature the
// change adds (lib/slug/extra.rb) is the test's own failure, as is a
// require_relative's path.
func TestRubyMissingGem(t *testing.T) {
	rack := "/usr/lib/ruby/3.1.0/rubygems/core_ext/kernel_require.rb:85:in `require': cannot load such file -- rack/test (LoadError)\n\tfrom spec/spec_helper.rb:4:in `<top (required)>'\n"
	changed := []string{"lib/slug/extra.rb", "spec/slug_spec.rb"}
	want := "Ruby cannot load `rack/test` (LoadError), which no file of the project or the change provides: the gem `rack` is not installed in the image or not in the bundle"
	if got := rubyMissingGem(rack, changed); got != want {
		t.Errorf("rack: %q, want %q", got, want)
	}
	for _, own := range []string{
		"spec/slug_spec.rb:1:in `require': cannot load such file -- slug/extra (LoadError)\n",
		"test/slug_test.rb:3:in `require_relative': cannot load such file -- /w/lib/slug/nil (LoadError)\n",
		"spec/slug_spec.rb:9:in `block': undefined method `extra' for Slug:Module (NoMethodError)\n",
	} {
		if got := rubyMissingGem(own, changed); got != "" {
			t.Errorf("%q: %q, want none", own, got)
		}
	}
	results := []NewTestResult{
		{NewTest: NewTest{Name: "Slug extra", Lang: LangRuby}, Status: BuildFailsBefore, Output: rack},
		{NewTest: NewTest{Name: "Slug own", Lang: LangRuby}, Status: BuildFailsBefore, Output: "cannot load such file -- slug/extra (LoadError)"},
		{NewTest: NewTest{Name: "rack_test", Lang: LangPython}, Status: BuildFailsBefore, Output: rack},
	}
	rubyMissingGems(results, changed)
	if results[0].Status != NotRunBefore || results[0].Reason != "cannot be shown because the run could not start: "+want {
		t.Errorf("rack: %s %q", results[0].Status, results[0].Reason)
	}
	if results[1].Status != BuildFailsBefore || results[2].Status != BuildFailsBefore {
		t.Errorf("own feature or not Ruby changed: %+v", results[1:])
	}
}

// TestPythonMissingModule: python-slugify's new test, run on the
// original tree offline, stopped at a collection error importing
// text_unidecode, a dependency setup could not install: that run could
// not start, naming the module, and is no compile failure. A module the
// change adds (slug/extra.py, a new package) is the test's own failure.
func TestPythonMissingModule(t *testing.T) {
	out := "ImportError while importing test module '/workspace/test.py'.\nslugify/slugify.py:9: in <module>\n    import unidecode\n" +
		"E   ModuleNotFoundError: No module named 'unidecode'\n\nDuring handling of the above exception, another exception occurred:\n" +
		"slugify/slugify.py:11: in <module>\n" +
		"    import text_unidecode as unidecode\nE   ModuleNotFoundError: No module named 'text_unidecode'\n" +
		"=========================== short test summary info ============================\nERROR test.py\n"
	changed := []string{"src/slug/extra.py", "newpkg/__init__.py", "test.py"}
	want := "Python cannot import `text_unidecode`, which no file of the change provides: it is a dependency not installed in the image or the project's virtualenv"
	if got := pythonMissingModule(out, changed); got != want {
		t.Errorf("text_unidecode: %q, want %q", got, want)
	}
	for _, own := range []string{
		"E   ModuleNotFoundError: No module named 'slug.extra'\n",
		"E   ModuleNotFoundError: No module named 'newpkg'\n",
		"E   ImportError: cannot import name 'PRE_TRANSLATIONS' from 'slugify'\n",
	} {
		if got := pythonMissingModule(own, changed); got != "" {
			t.Errorf("%q: %q, want none", own, got)
		}
	}
	results := []NewTestResult{
		{NewTest: NewTest{Name: "test_pre_translation", Lang: LangPython}, Status: BuildFailsBefore, Output: out},
		{NewTest: NewTest{Name: "own", Lang: LangPython}, Status: BuildFailsBefore, Output: "E   ModuleNotFoundError: No module named 'newpkg'\n"},
		{NewTest: NewTest{Name: "ruby", Lang: LangRuby}, Status: BuildFailsBefore, Output: out},
	}
	pythonMissingModules(results, changed)
	if results[0].Status != NotRunBefore || results[0].Reason != "cannot be shown because the run could not start: "+want {
		t.Errorf("text_unidecode: %s %q", results[0].Status, results[0].Reason)
	}
	if results[1].Status != BuildFailsBefore || results[2].Status != BuildFailsBefore {
		t.Errorf("own module or not Python changed: %+v", results[1:])
	}
}
