package verify

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Setup is how one project's dependencies are fetched before its checks
// run without a network: the command, run in Dir, and the manifests it
// reads (a change to one of them means setup must run again).
type Setup struct {
	Dir       string   `json:"dir"`
	Command   string   `json:"command"`
	Manifests []string `json:"manifests"`
}

// SetupFor is the setup of every detected project that has one, root
// first: what dependency setup runs (with a network) before the checks.
func (d Detection) SetupFor() []Setup {
	var out []Setup
	for _, p := range d.Projects {
		if p.Setup != nil {
			out = append(out, *p.Setup)
		}
	}
	return out
}

// setup makes a project's Setup, with each manifest named from the
// repository root.
func setup(dir, cmd string, manifests ...string) *Setup {
	s := &Setup{Dir: dir, Command: inDir(dir, cmd)}
	for _, m := range manifests {
		s.Manifests = append(s.Manifests, path.Join(dir, m))
	}
	return s
}

// The files the runners write their machine output to, in the check
// sandbox's /tmp (see prelude and reportScript).
const (
	rspecJSONPath   = "/tmp/.patchwright-rspec.json"
	phpunitXMLPath  = "/tmp/.patchwright-phpunit.xml"
	ctestJUnitPath  = "/tmp/.patchwright-ctest.xml"
	mesonBuildDir   = "builddir"
	cmakeBuildDir   = "build"
	minitestRunner  = `ruby -Ilib -Itest -e 'Dir.glob("test/**/{*_test,test_*}.rb").sort.each { |f| require File.expand_path(f) }'`
	rubyMarkersHelp = "Gemfile, *.gemspec or Rakefile"
)

// dirExists reports whether dir/name exists in the workspace.
func (d *detector) dirExists(dir, name string) (bool, error) {
	return exists(d.ws, path.Join(dir, name))
}

// readText reads dir/name, or "" when it does not exist.
func (d *detector) readText(dir, name string) (string, error) {
	ok, err := d.dirExists(dir, name)
	if err != nil || !ok {
		return "", err
	}
	data, err := d.read(path.Join(dir, name))
	return string(data), err
}

// rakeTestRE finds a Rakefile's test task: Rake::TestTask (whose default
// name is test, run by minitest or test-unit) or a task named test.
var rakeTestRE = regexp.MustCompile(`Rake::TestTask|\btask\s*\(?\s*(:test\b|"test"|'test'|test:)`)

// ruby adds one test check per Ruby project (a directory with a Gemfile,
// a gemspec or a Rakefile, not inside another): RSpec when it has spec/
// or .rspec (minitest specs run by the Rakefile's spec task when they are
// such), else the Rakefile's test task, else minitest's test/ files
// loaded by ruby; through `bundle exec` when a Gemfile says which gems.
func (d *detector) ruby() error {
	for _, dir := range d.outermost("Gemfile", gemspecMarker, "Rakefile") {
		if !d.usable(dir, "Ruby") {
			continue
		}
		bundle := ""
		var s *Setup
		if d.t.has(dir, "Gemfile") {
			bundle = "bundle exec "
			s = setup(dir, "bundle install", "Gemfile", "Gemfile.lock")
		}
		spec, err := d.dirExists(dir, "spec")
		if err != nil {
			return err
		}
		dotRSpec, err := d.dirExists(dir, ".rspec")
		if err != nil {
			return err
		}
		rakefile, err := d.readText(dir, "Rakefile")
		if err != nil {
			return err
		}
		testDir, err := d.dirExists(dir, "test")
		if err != nil {
			return err
		}
		var c Check
		var tool string
		xunit, xwhy := KindMinitest, ""
		if !spec && !dotRSpec && (rakeTestRE.MatchString(rakefile) || testDir) {
			if xunit, xwhy, err = d.rubyXUnit(dir); err != nil {
				return err
			}
		}
		switch {
		case spec || dotRSpec:
			if c, tool, err = d.rubySpecCheck(dir, bundle, rakefile, dotRSpec); err != nil {
				return err
			}
		case rakeTestRE.MatchString(rakefile):
			tool = "rake"
			c = Check{Name: "test", Run: bundle + "rake test", Kind: xunit, Why: "the Rakefile defines a test task, run by " + string(xunit) + " (" + xwhy + ")"}
		case testDir:
			tool = string(xunit)
			c = Check{Name: "test", Run: bundle + minitestRunner, Kind: xunit, Why: "test/ with no Rakefile test task: its files loaded by ruby, run by " + string(xunit) + " (" + xwhy + ")"}
		default:
			d.missing = append(d.missing, fmt.Sprintf("The Ruby project in %s (%s) has no spec/, .rspec, Rakefile test task or test/ directory; its code was not tested.", dir, rubyMarkersHelp))
			continue
		}
		if bundle != "" {
			c.Why += "; through bundle exec, as the Gemfile pins the gems"
		}
		d.add(Project{Dir: dir, Language: "ruby", Tool: tool, Setup: s}, c)
	}
	return nil
}

// rubySpecCheck is the check of a Ruby project with spec/ or .rspec:
// the Rakefile's spec task, as minitest, when spec/ holds minitest specs
// (no .rspec; minitestSpecs), else RSpec.
func (d *detector) rubySpecCheck(dir, bundle, rakefile string, dotRSpec bool) (Check, string, error) {
	if !dotRSpec && rakeSpecRE.MatchString(rakefile) {
		ok, why, err := d.minitestSpecs(dir)
		if err != nil || ok {
			return Check{Name: "test", Run: bundle + "rake spec", Kind: KindMinitest, Why: "spec/ holds minitest specs (" + why + "); the Rakefile's spec task runs them"}, "rake", err
		}
	}
	return Check{Name: "test", Run: bundle + "rspec", Kind: KindRSpec, Why: "spec/ or .rspec: RSpec"}, "rspec", nil
}

// composerJSON is the part of composer.json detection reads.
type composerJSON struct {
	Require    map[string]string `json:"require"`
	RequireDev map[string]string `json:"require-dev"`
	Scripts    map[string]any    `json:"scripts"`
}

// php adds one test check per PHP project (composer.json or a PHPUnit
// configuration, not inside another): PHPUnit from vendor/bin when
// Composer installs it, the image's phpunit when only a configuration
// asks for it, else the composer.json test script. PHPUnit writes its
// JUnit report for the counts.
func (d *detector) php() error {
	for _, dir := range d.outermost("composer.json", "phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml") {
		if !d.usable(dir, "PHP") {
			continue
		}
		var cj composerJSON
		var s *Setup
		if d.t.has(dir, "composer.json") {
			data, err := d.read(path.Join(dir, "composer.json"))
			if err != nil {
				return err
			}
			if err := json.Unmarshal(data, &cj); err != nil {
				d.missing = append(d.missing, fmt.Sprintf("%s is not valid JSON; the PHP code was not tested.", path.Join(dir, "composer.json")))
				continue
			}
			s = setup(dir, "composer install --no-interaction --no-progress", "composer.json", "composer.lock")
		}
		config := d.t.has(dir, "phpunit.xml") || d.t.has(dir, "phpunit.xml.dist") || d.t.has(dir, "phpunit.dist.xml")
		_, dep := cj.RequireDev["phpunit/phpunit"]
		if _, ok := cj.Require["phpunit/phpunit"]; ok {
			dep = true
		}
		junit := " --log-junit " + phpunitXMLPath
		var c Check
		tool := "phpunit"
		switch {
		case dep:
			c = Check{Name: "test", Run: "vendor/bin/phpunit" + junit, Kind: KindPHPUnit, Why: "composer.json requires phpunit/phpunit: the version it installs in vendor/bin"}
		case config:
			c = Check{Name: "test", Run: "phpunit" + junit, Kind: KindPHPUnit, Why: "a PHPUnit configuration and no phpunit/phpunit in composer.json: the image's phpunit"}
		case cj.Scripts["test"] != nil:
			tool = "composer"
			c = Check{Name: "test", Run: "composer test", Why: "composer.json's test script (no PHPUnit configuration or dependency)"}
			if strings.Contains(fmt.Sprint(cj.Scripts["test"]), "phpunit") {
				c.Kind = KindPHPUnit
			}
		default:
			d.missing = append(d.missing, fmt.Sprintf("%s has no PHPUnit configuration, phpunit/phpunit dependency or test script; the PHP code was not tested.", path.Join(dir, "composer.json")))
			continue
		}
		d.add(Project{Dir: dir, Language: "php", Tool: tool, Setup: s}, c)
	}
	return nil
}

// gradleMarkers make a directory a Gradle build.
var gradleMarkers = []string{"settings.gradle", "settings.gradle.kts", "build.gradle", "build.gradle.kts"}

// gradle adds one test check per Gradle build (a settings or build
// script not inside another build): the wrapper when the repository has
// one (the Gradle version it was written for), offline unless checks
// have a network.
func (d *detector) gradle() error {
	for _, dir := range d.outermost(gradleMarkers...) {
		if !d.usable(dir, "Gradle") {
			continue
		}
		wrapper, err := d.dirExists(dir, "gradlew")
		if err != nil {
			return err
		}
		g, why := "gradle", "a Gradle build without a wrapper: the image's gradle"
		if wrapper {
			g, why = "./gradlew", "a Gradle build with its wrapper, the version the project was written for"
		}
		offline := " --offline"
		if d.opts.Network {
			offline = ""
		}
		s := setup(dir, g+" dependencies", append(gradleMarkers, "gradle.properties", "gradle/libs.versions.toml", "gradle/wrapper/gradle-wrapper.properties")...)
		d.add(Project{Dir: dir, Language: "java", Tool: "gradle", Setup: s},
			Check{Name: "test", Run: g + " test" + offline + " --console=plain", Kind: KindGradle, Why: why})
	}
	return nil
}

// ctestRE finds what makes ctest run a CMake project's tests.
var ctestRE = regexp.MustCompile(`(?i)\b(enable_testing\s*\(|include\s*\(\s*CTest\b)`)

// native adds CMake and Meson projects (C and C++): configure and build
// as gates, then the tests through CTest or meson test. A directory with
// both is built with CMake.
func (d *detector) native() error {
	cmakeDirs := d.outermost("CMakeLists.txt")
	for _, dir := range cmakeDirs {
		if !d.usable(dir, "CMake") {
			continue
		}
		root, err := d.readText(dir, "CMakeLists.txt")
		if err != nil {
			return err
		}
		checks := []Check{
			{Name: "configure", Run: "cmake -S . -B " + cmakeBuildDir, Gate: true, Why: "CMakeLists.txt: CMake configures into " + cmakeBuildDir + "/"},
			{Name: "build", Run: "cmake --build " + cmakeBuildDir + " --parallel", Gate: true, Why: "CMakeLists.txt: CMake builds every target"},
		}
		if ctestRE.MatchString(root) {
			checks = append(checks, Check{Name: "test", Run: "ctest --test-dir " + cmakeBuildDir + " --output-on-failure --output-junit " + ctestJUnitPath,
				Kind: KindCTest, Why: "CMakeLists.txt enables testing: CTest runs every add_test"})
		} else {
			d.missing = append(d.missing, fmt.Sprintf("%s has no enable_testing() or include(CTest); the C/C++ code was built but not tested.", path.Join(dir, "CMakeLists.txt")))
		}
		d.add(Project{Dir: dir, Language: "c", Tool: "cmake"}, checks...)
	}
	for _, dir := range d.outermost("meson.build") {
		if within2(dir, cmakeDirs) || !d.usable(dir, "Meson") {
			continue
		}
		d.add(Project{Dir: dir, Language: "c", Tool: "meson"},
			Check{Name: "configure", Run: "meson setup " + mesonBuildDir, Gate: true, Why: "meson.build: Meson configures into " + mesonBuildDir + "/"},
			Check{Name: "build", Run: "meson compile -C " + mesonBuildDir, Gate: true, Why: "meson.build: Meson builds every target"},
			Check{Name: "test", Run: "meson test -C " + mesonBuildDir + " --print-errorlogs", Kind: KindMeson, Why: "meson.build: meson test runs every test()"},
		)
	}
	return nil
}

// within2 reports whether dir is one of dirs or below one.
func within2(dir string, dirs []string) bool {
	for _, r := range dirs {
		if within(dir, r) {
			return true
		}
	}
	return false
}

// makeTargetRE finds a rule for test or check in a Makefile: "test:",
// "check test: all", not an assignment ("test := x").
var makeTargetRE = regexp.MustCompile(`(?m)^((?:[A-Za-z0-9_.-]+[ \t]+)*)(test|check)((?:[ \t]+[A-Za-z0-9_.-]+)*)[ \t]*::?(?:[^=]|$)`)

// makeTarget returns the Makefile's test target, "test" before "check",
// or "" when it has neither. It reads the rules and runs nothing: make -n
// would expand $(shell …) calls, which are the repository's code.
func makeTarget(makefile string) string {
	found := map[string]bool{}
	for _, m := range makeTargetRE.FindAllStringSubmatch(makefile, -1) {
		found[m[2]] = true
	}
	switch {
	case found["test"]:
		return "test"
	case found["check"]:
		return "check"
	}
	return ""
}

// make adds `make test` (or check) for a Makefile that has such a target
// in a directory no other project covers: a Go or CMake project's
// Makefile wraps the commands detected for it already.
func (d *detector) make() error {
	var covered []string
	for _, p := range d.projects {
		covered = append(covered, p.Dir)
	}
	for _, dir := range d.outermost("GNUmakefile", "makefile", "Makefile") {
		if within2(dir, covered) || !d.usable(dir, "Make") {
			continue
		}
		var name, text string
		for _, n := range []string{"GNUmakefile", "makefile", "Makefile"} { // GNU make's order
			if d.t.has(dir, n) {
				data, err := d.read(path.Join(dir, n))
				if err != nil {
					return err
				}
				name, text = n, string(data)
				break
			}
		}
		target := makeTarget(text)
		if target == "" {
			d.missing = append(d.missing, fmt.Sprintf("%s has no test or check target; nothing in it was run.", path.Join(dir, name)))
			continue
		}
		d.add(Project{Dir: dir, Language: "c", Tool: "make"},
			Check{Name: target, Run: "make " + target, Why: fmt.Sprintf("%s has a %s target (read from its rules; no other target is run)", name, target)})
	}
	return nil
}
