package verify

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Shells say a command is missing in their own words and exit 127; a
// file that is not executable exits 126. Each pattern captures the
// command's name.
var (
	notFoundREs = []*regexp.Regexp{
		// dash, Debian's /bin/sh: "/bin/sh: 1: python: not found";
		// busybox: "sh: python: not found".
		regexp.MustCompile(`^(?:\S*/)?(?:sh|dash|ash): (?:\d+: )?(.+?): not found$`),
		// bash: "bash: line 1: python: command not found".
		regexp.MustCompile(`^(?:\S*/)?bash: (?:line \d+: )?(.+?): command not found$`),
		// env in a #! line: "/usr/bin/env: 'node': No such file or directory".
		regexp.MustCompile(`^(?:\S*/)?env: ['‘]?([^'’]+?)['’]?: No such file or directory$`),
	}
	// make runs a recipe's command itself when it needs no shell: "make:
	// python: No such file or directory", then reports the recipe's exit
	// status: "make: *** [Makefile:2: test] Error 127".
	makeNotFoundRE  = regexp.MustCompile(`^make(?:\[\d+\])?: (.+?): (?:No such file or directory|Command not found)$`)
	makeError127RE  = regexp.MustCompile(`(?m)^make(?:\[\d+\])?: \*\*\* \[.*\] Error 127$`)
	notExecutableRE = regexp.MustCompile(`^(?:\S*/)?(?:sh|dash|ash|bash): (?:\d+: |line \d+: )?(.+?): Permission denied$`)
	// "/usr/bin/python3: No module named pytest", printed by python -m
	// when the module is not installed (a test's own ImportError reads
	// "ModuleNotFoundError: No module named 'x'", with quotes).
	noModuleRE = regexp.MustCompile(`^(?:\S*/)?(python[0-9.]*): No module named ([A-Za-z_][A-Za-z0-9_.]*)$`)
	// "go: download go1.99.0 for linux/amd64: toolchain not available".
	goToolchainRE = regexp.MustCompile(`^go: download (go\S+) for \S+: toolchain not available$`)
	// A sandbox whose HOME or cache volume the user cannot write (issue
	// 12: a root-owned cache volume): "failed to initialize build cache
	// at /home/agent/.cache/go-build: mkdir ...: permission denied".
	goCacheRE = regexp.MustCompile(`^(?:go: )?failed to initialize build cache at (\S+): .*(permission denied|read-only file system)$`)
	// rustup: "error: toolchain 'nightly-x86_64-unknown-linux-gnu' is not installed".
	rustToolchainRE = regexp.MustCompile(`^error: toolchain '([^']+)' is not installed`)
	// Maven offline without the plugins or dependencies in its local
	// repository: "Cannot access central (...) in offline mode and the
	// artifact g:a:jar:v has not been downloaded from it before."
	mavenOfflineRE = regexp.MustCompile(`Cannot access \S+ \(\S+\) in offline mode and the artifact (\S+) has not been downloaded`)
	// Bundler without the Gemfile's gems: "Could not find gem 'httparty'
	// in locally installed gems."; Gradle offline: "No cached version of
	// junit:junit:4.13.2 available for offline mode."
	bundlerGemRE = regexp.MustCompile(`Could not find gem '([^']+)' in locally installed gems`)
	// Ruby without the test framework itself: "x_test.rb:2:in `require':
	// cannot load such file -- test/unit (LoadError)". Only the
	// frameworks: a file the change adds is the test's own failure.
	rubyFrameworkRE = regexp.MustCompile(`cannot load such file -- (test/unit|minitest/autorun|minitest|rspec|rspec/core|rspec/autorun) \(LoadError\)$`)
	gradleOfflineRE = regexp.MustCompile(`No cached version of (\S+) available for offline mode`)
)

// couldNotRun reads a failed run's output for the signs that the command
// could not do its work at all because the image lacks a program, and
// returns the one-line reason, or "" when the command ran (and perhaps
// failed). Exit 127 always means "could not run": shells reserve it for a
// missing command.
func couldNotRun(exit int, output string) string {
	if exit == 0 {
		return ""
	}
	if exit != 127 && makeError127RE.MatchString(ansiRE.ReplaceAllString(output, "")) {
		exit = 127 // the recipe's command was not found; make exits 2
	}
	early := 0 // non-empty lines seen: a missing module or toolchain is said first
	for _, line := range outputLines(output) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		early++
		if exit == 127 {
			for _, re := range append(notFoundREs, makeNotFoundRE) {
				if m := re.FindStringSubmatch(line); m != nil {
					return notFound(m[1])
				}
			}
		}
		if exit == 126 {
			if m := notExecutableRE.FindStringSubmatch(line); m != nil {
				return fmt.Sprintf("%s cannot be executed (permission denied)", quoteName(m[1]))
			}
		}
		if m := noModuleRE.FindStringSubmatch(line); m != nil && early <= 10 {
			return fmt.Sprintf("%s is not installed for %s in the image", quoteName(m[2]), quoteName(m[1]))
		}
		if m := goToolchainRE.FindStringSubmatch(line); m != nil && early <= 10 {
			return fmt.Sprintf("the Go toolchain %s that go.mod asks for is not in the image and cannot be downloaded", quoteName(m[1]))
		}
		if m := goCacheRE.FindStringSubmatch(line); m != nil && early <= 10 {
			return fmt.Sprintf("the Go build cache %s cannot be written in the sandbox (%s)", quoteText(m[1]), m[2])
		}
		if m := rustToolchainRE.FindStringSubmatch(line); m != nil && early <= 10 {
			return fmt.Sprintf("the Rust toolchain %s is not installed in the image", quoteName(m[1]))
		}
		if m := bundlerGemRE.FindStringSubmatch(line); m != nil {
			return fmt.Sprintf("the gem %s is not installed in the image (bundle install in setup fetches it)", quoteName(m[1]))
		}
		if m := rubyFrameworkRE.FindStringSubmatch(line); m != nil && early <= 10 {
			return fmt.Sprintf("Ruby cannot load the test framework %s (LoadError): its gem is not installed in the image or not in the bundle", quoteText(m[1]))
		}
		if m := gradleOfflineRE.FindStringSubmatch(line); m != nil {
			return fmt.Sprintf("Gradle is offline and %s is not in its cache (fetch it in setup)", quoteName(m[1]))
		}
		if m := mavenOfflineRE.FindStringSubmatch(line); m != nil {
			return fmt.Sprintf("Maven is offline and %s is not in its local repository (add it to the image or fetch it in setup)", quoteName(m[1]))
		}
	}
	switch exit {
	case 127:
		return "a command was not found in the image (exit 127)"
	case 126:
		return "a command could not be executed (exit 126)"
	}
	return ""
}

// notFound says a program is missing: a path inside the project (such as
// vendor/bin/phpunit) is named whole, as what setup did not install; any
// other program is missing from the image.
func notFound(prog string) string {
	if strings.Contains(prog, "/") && !strings.HasPrefix(prog, "/") && !strings.Contains(prog, "..") {
		return fmt.Sprintf("%s does not exist in the work tree (the project's setup, such as `composer install` or `npm ci`, did not install it)", quoteText(strings.TrimPrefix(prog, "./")))
	}
	return fmt.Sprintf("%s not found in the image", quoteName(prog))
}

// quoteName puts a program's name, taken from the repository's output,
// in backticks, keeping only its base name and printable characters.
func quoteName(s string) string {
	if strings.Contains(s, "/") && !strings.HasPrefix(s, "./") {
		s = path.Base(s)
	}
	return quoteText(s)
}

// quoteText puts text from the output in backticks, printable and short.
func quoteText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == '`' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return "`" + s + "`"
}
