package report

import (
	"strings"
	"testing"
)

func TestPRBodyDependencies(t *testing.T) {
	in := base()
	in.Dependencies = []DependencySetup{
		{ByModel: true, Manifests: []string{"go.mod"}, Commands: []DependencyCommand{{Command: "go mod download", ExitCode: 1}}},
		{
			Configured: true,
			Manifests:  []string{"go.mod", "go.sum"},
			Commands:   []DependencyCommand{{Command: "go env -w GOPROXY=http://proxy.test && go mod download"}},
			Fetched: []Dependency{
				{What: "Go module", Name: "example.com/textcase", Version: "v1.0.0"},
				{What: "Go module", Name: "golang.org/x/text", Version: "v0.20.0", Was: "v0.19.0"},
			},
			Sources: []string{"GOPROXY=http://proxy.test"},
		},
	}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	changes := body[strings.Index(body, "## Changes"):strings.Index(body, "## Verification")]
	for _, want := range []string{
		"**Dependencies**",
		"The change edits `go.mod`, `go.sum` (the lock file changed)",
		"the `setup:` commands of the default branch's .github/agent.yml, never a command the model wrote",
		"`go env -w GOPROXY=http://proxy.test && go mod download` (exit 0)",
		"Go module `example.com/textcase` `v1.0.0` (new); Go module `golang.org/x/text` `v0.20.0` (was `v0.19.0`)",
		"From: `GOPROXY=http://proxy.test`.",
		"The model asked for dependency setup 1 time(s)",
	} {
		if !strings.Contains(changes, want) {
			t.Errorf("Changes lacks %q:\n%s", want, changes)
		}
	}
	// The model's failed try is not the application's: nothing in Not
	// verified, since the last setup passed.
	if strings.Contains(body, "Dependency setup after the change failed") {
		t.Errorf("a passing setup reported as failed:\n%s", body)
	}
	if got := headings(body); len(got) != len(contractHeadings) {
		t.Errorf("headings %q", got)
	}
}

func TestPRBodyDependenciesFailedAndHostile(t *testing.T) {
	in := base()
	in.Dependencies = []DependencySetup{{
		Manifests: []string{"package.json"},
		Commands:  []DependencyCommand{{Command: "npm ci --ignore-scripts", ExitCode: 1}},
		// A name from the change that tries to break out of its code span
		// and ping people.
		Fetched: []Dependency{{What: "npm package", Name: "evil` @everyone <img src=x>", Version: "1.0.0"}},
	}}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(no lock file changed)", "each changed project's own download command", "(exit 1)",
		"From: the registries the sandbox image configures (not recorded).",
		"Dependency setup after the change failed, so the final checks ran without the dependencies the change needs"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	// GitHub renders a code span's text literally: the name stays one.
	if !strings.Contains(body, "``evil` @everyone <img src=x>``") || strings.Count(body, "@everyone") != 1 {
		t.Errorf("a dependency name escaped its code span:\n%s", body)
	}
	if NotVerified(in) == nil {
		t.Errorf("no Not verified lines")
	}
}

func TestPRBodyDependenciesNoneRan(t *testing.T) {
	in := base()
	in.Dependencies = []DependencySetup{{Manifests: []string{"poetry.lock"}}}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "The change edits `poetry.lock` (the lock file changed), but no dependency setup ran") || strings.Contains(body, "so Patchwright ran dependency setup") {
		t.Errorf("a setup that ran nothing is reported as run:\n%s", body)
	}
}

// TestPRBodyDetectedSetup: a detected first setup is shown under Changes
// as detected, with the manifest that called for each command; a failed
// one is named in Not verified with the line that says why it failed, a
// passing one is not.
func TestPRBodyDetectedSetup(t *testing.T) {
	in := base()
	in.DetectedSetup = []DetectedCommand{
		{Command: "npm ci --ignore-scripts --no-audit --no-fund", Manifest: "web/package.json"},
		{Command: "bundle install", Manifest: "Gemfile", ExitCode: 15, Error: "Could not fetch specs from https://rubygems.org/"},
	}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	changes := body[strings.Index(body, "## Changes"):strings.Index(body, "## Verification")]
	for _, want := range []string{
		"**Dependencies**",
		"The default branch's .github/agent.yml has no `setup:`, so Patchwright ran detected setup before the baseline",
		"`npm ci --ignore-scripts --no-audit --no-fund` (exit 0) because `web/package.json` declares dependencies; `bundle install` (exit 15) because `Gemfile` declares dependencies.",
	} {
		if !strings.Contains(changes, want) {
			t.Errorf("Changes lacks %q:\n%s", want, changes)
		}
	}
	notVerified := body[strings.Index(body, "## Not verified"):]
	if !strings.Contains(notVerified, "Detected setup failed (`bundle install`: `Could not fetch specs from https://rubygems.org/`), so the checks ran without what it was to fetch") {
		t.Errorf("Not verified does not name the failed detected setup:\n%s", body)
	}
	if strings.Contains(notVerified, "npm ci") {
		t.Errorf("Not verified names the passing command:\n%s", body)
	}
	in.DetectedSetup = in.DetectedSetup[:1]
	if body, _ := PRBody(in); strings.Contains(body, "Detected setup failed") {
		t.Errorf("a passing detected setup reported as failed:\n%s", body)
	}
}

// TestPRBodyDetectedSetupGroups: a detected command that installs one
// group of a manifest's requirements says which, under Changes and, when
// it failed, in Not verified, so a reader knows which group is missing.
func TestPRBodyDetectedSetupGroups(t *testing.T) {
	in := base()
	in.DetectedSetup = []DetectedCommand{
		{Command: "pip install 'pytest-mock'", Manifest: "tox.ini", Group: "[testenv] deps", ExitCode: 1, Error: "ERROR: No matching distribution found for pytest-mock"},
		{Command: "pip install 'hypothesis'", Manifest: "pyproject.toml", Group: "[project.optional-dependencies] test"},
		{Command: "pip install -e .", Manifest: "setup.py"},
	}
	body, err := PRBody(in)
	if err != nil {
		t.Fatal(err)
	}
	changes := body[strings.Index(body, "## Changes"):strings.Index(body, "## Verification")]
	want := "`pip install 'pytest-mock'` (exit 1) because `tox.ini` declares dependencies in `[testenv] deps`; " +
		"`pip install 'hypothesis'` (exit 0) because `pyproject.toml` declares dependencies in `[project.optional-dependencies] test`; " +
		"`pip install -e .` (exit 0) because `setup.py` declares dependencies."
	if !strings.Contains(changes, want) {
		t.Errorf("Changes lacks %q:\n%s", want, changes)
	}
	notVerified := body[strings.Index(body, "## Not verified"):]
	if want := "Detected setup failed (`pip install 'pytest-mock'` (`tox.ini` `[testenv] deps`): `ERROR: No matching distribution found for pytest-mock`)"; !strings.Contains(notVerified, want) {
		t.Errorf("Not verified lacks %q:\n%s", want, notVerified)
	}
}
