package verify

import (
	"reflect"
	"strings"
	"testing"
)

// TestDetectNative: each new ecosystem's markers give the command its
// maintainers use, with why, and the setup dependency setup runs.
func TestDetectNative(t *testing.T) {
	for name, tc := range map[string]struct {
		files      map[string]string
		opts       DetectOptions
		want       []string
		setup      []string
		missingHas string
	}{
		"rspec with Gemfile": {files: map[string]string{"Gemfile": "gem 'rspec'\n", "spec/a_spec.rb": ""},
			want: []string{"test: bundle exec rspec"}, setup: []string{"bundle install"}},
		"rspec without Gemfile": {files: map[string]string{"x.gemspec": "", ".rspec": ""}, want: []string{"test: rspec"}},
		"rake test": {files: map[string]string{"Gemfile": "", "Rakefile": "require 'rake/testtask'\nRake::TestTask.new(:test)\n", "test/a_test.rb": ""},
			want: []string{"test: bundle exec rake test"}, setup: []string{"bundle install"}},
		"minitest without Rakefile task": {files: map[string]string{"Rakefile": "task :release\n", "test/a_test.rb": ""},
			want: []string{"test: " + minitestRunner}},
		"ruby without tests": {files: map[string]string{"Gemfile": ""}, missingHas: "has no spec/"},
		"phpunit from vendor": {files: map[string]string{"composer.json": `{"require-dev":{"phpunit/phpunit":"^10"}}`, "phpunit.xml.dist": ""},
			want: []string{"test: vendor/bin/phpunit --log-junit " + phpunitXMLPath}, setup: []string{"composer install --no-interaction --no-progress"}},
		"phpunit from the image": {files: map[string]string{"composer.json": `{}`, "phpunit.xml": ""},
			want: []string{"test: phpunit --log-junit " + phpunitXMLPath}, setup: []string{"composer install --no-interaction --no-progress"}},
		"composer test": {files: map[string]string{"composer.json": `{"scripts":{"test":"pest"}}`}, want: []string{"test: composer test"},
			setup: []string{"composer install --no-interaction --no-progress"}},
		"composer without tests": {files: map[string]string{"composer.json": `{}`}, setup: nil, missingHas: "no PHPUnit configuration"},
		"bad composer.json":      {files: map[string]string{"composer.json": `{`}, missingHas: "is not valid JSON"},
		"cmake with tests": {files: map[string]string{"CMakeLists.txt": "project(x)\nenable_testing()\n", "lib/CMakeLists.txt": ""},
			want: []string{"configure: cmake -S . -B build", "build: cmake --build build --parallel", "test: ctest --test-dir build --output-on-failure --output-junit " + ctestJUnitPath}},
		"cmake include CTest": {files: map[string]string{"CMakeLists.txt": "include(CTest)\n"},
			want: []string{"configure: cmake -S . -B build", "build: cmake --build build --parallel", "test: ctest --test-dir build --output-on-failure --output-junit " + ctestJUnitPath}},
		"cmake without tests": {files: map[string]string{"CMakeLists.txt": "project(x)\n"},
			want: []string{"configure: cmake -S . -B build", "build: cmake --build build --parallel"}, missingHas: "built but not tested"},
		"meson": {files: map[string]string{"meson.build": "project('x','c')\n"},
			want: []string{"configure: meson setup builddir", "build: meson compile -C builddir", "test: meson test -C builddir --print-errorlogs"}},
		"make test":       {files: map[string]string{"Makefile": "all:\n\tcc x.c\n\ntest: all\n\t./run\n"}, want: []string{"test: make test"}},
		"make check":      {files: map[string]string{"GNUmakefile": ".PHONY: check\nall check: x\n"}, want: []string{"check: make check"}},
		"make assignment": {files: map[string]string{"Makefile": "test := yes\ntest_x: y\n"}, missingHas: "no test or check target"},
		// A Go module's Makefile wraps go test: not a second project.
		"make beside go": {files: map[string]string{"go.mod": "module m\n", "Makefile": "test:\n\tgo test ./...\n"},
			want: []string{"build: go build ./...", "vet: go vet ./...", "test: go test ./..."}},
		"gradle wrapper": {files: map[string]string{"settings.gradle.kts": "", "gradlew": "#!/bin/sh\n", "app/build.gradle.kts": ""},
			want: []string{"test: ./gradlew test --offline --console=plain"}, setup: []string{"./gradlew dependencies"}},
		"gradle online": {files: map[string]string{"build.gradle": ""}, opts: DetectOptions{Network: true},
			want: []string{"test: gradle test --console=plain"}, setup: []string{"gradle dependencies"}},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := Detect(repo(t, tc.files), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := commands(d.Checks); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("checks = %q, want %q", got, tc.want)
			}
			for _, c := range d.Checks {
				if c.Why == "" {
					t.Errorf("%s has no why", c.Name)
				}
			}
			var setup []string
			for _, s := range d.SetupFor() {
				setup = append(setup, s.Command)
				if len(s.Manifests) == 0 {
					t.Errorf("setup %q names no manifest", s.Command)
				}
			}
			if !reflect.DeepEqual(setup, tc.setup) {
				t.Errorf("setup = %q, want %q", setup, tc.setup)
			}
			if tc.missingHas != "" && !strings.Contains(strings.Join(d.Missing, " "), tc.missingHas) {
				t.Errorf("missing = %q, want mention of %q", d.Missing, tc.missingHas)
			}
		})
	}
}

// TestDetectRailsBesideJS: a Rails-like app at the root with its front end
// in frontend/ gets both projects' checks, each in its own directory.
func TestDetectRailsBesideJS(t *testing.T) {
	d, err := Detect(repo(t, map[string]string{
		"Gemfile":                  "gem 'rails'\n",
		"Rakefile":                 "require_relative 'config/application'\nRails.application.load_tasks\ntask :test\n",
		"test/models/user_test.rb": "",
		"frontend/package.json":    `{"scripts":{"test":"node --test"}}`,
		"native/CMakeLists.txt":    "enable_testing()\n",
	}), DetectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"test (frontend: npm): cd frontend && npm test", "test (rake): bundle exec rake test",
		"configure: cd native && cmake -S . -B build", "build: cd native && cmake --build build --parallel",
		"test (native: cmake): cd native && ctest --test-dir build --output-on-failure --output-junit " + ctestJUnitPath}
	if got := commands(d.Checks); !reflect.DeepEqual(got, want) {
		t.Errorf("checks = %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(d.Languages, []string{"node", "ruby", "c"}) {
		t.Errorf("languages = %v", d.Languages)
	}
}

// TestDetectRubyFramework: the framework of a Ruby project's test/ is
// the gem its Gemfile or gemspec declares, else what its test files
// require; the Rakefile's test task is labelled with it.
func TestDetectRubyFramework(t *testing.T) {
	const rake = "require 'rake/testtask'\nRake::TestTask.new(:test)\n"
	for name, tc := range map[string]struct {
		files   map[string]string
		want    TestKind
		whyHas  string
		command string
	}{
		"Gemfile test-unit": {files: map[string]string{"Gemfile": "source 'https://rubygems.org'\ngem \"test-unit\"\n", "Rakefile": rake, "test/a_test.rb": ""},
			want: KindTestUnit, whyHas: "Gemfile declares the test-unit gem", command: "bundle exec rake test"},
		"gemspec test-unit": {files: map[string]string{"x.gemspec": "Gem::Specification.new do |spec|\n  spec.add_development_dependency 'test-unit', '~> 3'\nend\n", "Rakefile": rake, "test/a_test.rb": ""},
			want: KindTestUnit, whyHas: "x.gemspec declares the test-unit gem", command: "rake test"},
		"Gemfile minitest": {files: map[string]string{"Gemfile": "gem 'minitest', '~> 5'\n", "Rakefile": rake, "test/a_test.rb": "require 'test/unit'\n"},
			want: KindMinitest, whyHas: "Gemfile declares the minitest gem"},
		"test file requires test/unit": {files: map[string]string{"Rakefile": rake, "test/unit/a_test.rb": "require \"test/unit\"\nclass ATest < Test::Unit::TestCase\nend\n"},
			want: KindTestUnit, whyHas: "test/unit/a_test.rb uses test-unit"},
		"test file requires minitest": {files: map[string]string{"Rakefile": "task :release\n", "test/a_test.rb": "require 'minitest/autorun'\n"},
			want: KindMinitest, whyHas: "test/a_test.rb uses minitest", command: minitestRunner},
		"nothing says": {files: map[string]string{"Rakefile": rake, "test/a_test.rb": "puts 1\n"},
			want: KindMinitest, whyHas: "no test-unit in the Gemfile, gemspec or test files"},
		"a gem named like it is not it": {files: map[string]string{"Gemfile": "gem 'test-unit-rr'\n", "Rakefile": rake, "test/a_test.rb": ""},
			want: KindMinitest},
		// roda: minitest specs in spec/, run by the Rakefile's spec task.
		"minitest specs": {files: map[string]string{"roda.gemspec": "Gem::Specification.new do |s|\n  s.add_development_dependency \"minitest\", \">= 5.7.0\"\nend\n",
			"Rakefile": "desc \"Run specs\"\ntask \"spec\" do\n  sh \"ruby spec/all.rb\"\nend\n", "spec/a_spec.rb": "describe 'a' do\nend\n"},
			want: KindMinitest, whyHas: "spec/ holds minitest specs (roda.gemspec declares minitest, not rspec)", command: "rake spec"},
		"rspec beside minitest": {files: map[string]string{"Gemfile": "gem 'minitest'\ngem 'rspec'\n", "Rakefile": "task :spec\n", "spec/a_spec.rb": ""},
			want: KindRSpec, command: "bundle exec rspec"},
		"spec/ without a spec task": {files: map[string]string{"x.gemspec": "s.add_development_dependency 'minitest'\n", "spec/a_spec.rb": ""},
			want: KindRSpec, command: "rspec"},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := Detect(repo(t, tc.files), DetectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Checks) != 1 {
				t.Fatalf("checks %+v, want one", d.Checks)
			}
			c := d.Checks[0]
			if c.Kind != tc.want || !strings.Contains(c.Why, tc.whyHas) || tc.command != "" && c.Run != tc.command {
				t.Errorf("check %q kind %q why %q, want kind %q why with %q", c.Run, c.Kind, c.Why, tc.want, tc.whyHas)
			}
		})
	}
}
