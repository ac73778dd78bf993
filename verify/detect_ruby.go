package verify

import (
	"errors"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// KindTestUnit is test-unit, Ruby's xUnit gem: its own summary ("3 tests,
// 2 assertions, 1 failures, 1 errors, 0 pendings, …"), its Failure: and
// Error: blocks, and in verbose mode a line per test under its class.
const KindTestUnit TestKind = "test-unit"

var (
	// gemTestUnitRE and gemMinitestRE find the framework a Gemfile or
	// gemspec declares: gem "test-unit", add_development_dependency
	// "minitest", spec.add_dependency 'test-unit'.
	gemTestUnitRE = regexp.MustCompile(`(?m)^\s*(gem|\w+\.add_(development_|runtime_)?dependency)\s*\(?\s*["']test-unit["']`)
	gemMinitestRE = regexp.MustCompile(`(?m)^\s*(gem|\w+\.add_(development_|runtime_)?dependency)\s*\(?\s*["']minitest["']`)
	gemRSpecRE    = regexp.MustCompile(`(?m)^\s*(gem|\w+\.add_(development_|runtime_)?dependency)\s*\(?\s*["']rspec(-core)?["']`)
	// rakeSpecRE finds a Rakefile's spec task.
	rakeSpecRE = regexp.MustCompile(`Rake::TestTask\.new\(\s*:spec\b|\btask\s*\(?\s*(:spec\b|"spec"|'spec'|spec:)`)
	// testUnitSourceRE finds test-unit in a test file.
	testUnitSourceRE = regexp.MustCompile(`require\s*\(?\s*["']test/unit["']|Test::Unit::TestCase`)
	minitestSourceRE = regexp.MustCompile(`require\s*\(?\s*["']minitest/autorun["']|Minitest::Test|MiniTest::Unit::TestCase`)
)

// maxRubyTestFiles bounds how many test files are read to tell test-unit
// from minitest.
const maxRubyTestFiles = 50

// rubyXUnit decides whether a Ruby project's test/ files run on
// test-unit or minitest: the gem its Gemfile or gemspec declares, else
// what its test files require; minitest when nothing says. why says what
// decided it.
func (d *detector) rubyXUnit(dir string) (TestKind, string, error) {
	var declared []string
	var testUnit string
	err := d.ws.WalkVisible(dir, func(p string, e fs.DirEntry, err error) error {
		switch n := path.Base(p); {
		case err != nil || testUnit != "":
			return nil
		case e.IsDir():
			if p != dir {
				return fs.SkipDir
			}
			return nil
		case e.Type().IsRegular() && (n == "Gemfile" || strings.HasSuffix(n, ".gemspec")):
			data, err := d.read(p)
			if err != nil {
				return err
			}
			if gemTestUnitRE.Match(data) {
				testUnit = n
			} else if gemMinitestRE.Match(data) {
				declared = append(declared, n)
			}
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	if testUnit != "" {
		return KindTestUnit, testUnit + " declares the test-unit gem", nil
	}
	if len(declared) > 0 {
		return KindMinitest, declared[0] + " declares the minitest gem", nil
	}
	return d.rubyXUnitFromSources(dir)
}

// rubyXUnitFromSources reads the project's test/ files for the framework
// they require.
func (d *detector) rubyXUnitFromSources(dir string) (TestKind, string, error) {
	read := 0
	kind, why := KindMinitest, "no test-unit in the Gemfile, gemspec or test files: minitest"
	errDone := errors.New("done")
	err := d.ws.WalkVisible(path.Join(dir, "test"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || path.Ext(p) != ".rb" {
			return nil
		}
		if read++; read > maxRubyTestFiles {
			return errDone
		}
		data, err := d.read(p)
		if err != nil {
			return nil
		}
		switch {
		case testUnitSourceRE.Match(data):
			kind, why = KindTestUnit, strings.TrimPrefix(p, dir+"/")+" uses test-unit"
			return errDone
		case minitestSourceRE.Match(data):
			kind, why = KindMinitest, strings.TrimPrefix(p, dir+"/")+" uses minitest"
			return errDone
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDone) && !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	return kind, why, nil
}

// minitestSpecs reports whether a project's spec/ holds minitest specs,
// not RSpec's: its Gemfile or gemspec declares minitest and not rspec
// (roda, sequel). why names the file that said so.
func (d *detector) minitestSpecs(dir string) (ok bool, why string, err error) {
	minitest, rspec := "", false
	err = d.ws.WalkVisible(dir, func(p string, e fs.DirEntry, err error) error {
		switch n := path.Base(p); {
		case err != nil:
			return nil
		case e.IsDir():
			if p != dir {
				return fs.SkipDir
			}
		case e.Type().IsRegular() && (n == "Gemfile" || strings.HasSuffix(n, ".gemspec")):
			data, err := d.read(p)
			if err != nil {
				return err
			}
			rspec = rspec || gemRSpecRE.Match(data)
			if minitest == "" && gemMinitestRE.Match(data) {
				minitest = n
			}
		}
		return nil
	})
	if err != nil || rspec || minitest == "" {
		return false, "", err
	}
	return true, minitest + " declares minitest, not rspec", nil
}
