package pipeline

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/verify"
)

// apiPyproject declares runtime dependencies and a test extra.
const apiPyproject = "[project]\nname = \"api\"\ndependencies = [\"requests\"]\n\n[project.optional-dependencies]\ntest = [\"pytest-cov\"]\n"

// TestDetectSetup: the detected first setup runs a download command for
// each project whose manifest declares dependencies, by its lock file,
// and none for a project that declares nothing or whose setup would
// write into the commit (node_modules not ignored, no Gemfile.lock),
// none when setup is
// configured or the setup network is off, and none for Go without a cache
// volume to keep what it fetches.
func TestDetectSetup(t *testing.T) {
	origin := gitRepo(t, map[string]string{
		".gitignore":                 "node_modules/\n.venv/\n",
		"go.mod":                     "module a\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n",
		"web/package.json":           `{"name":"web","dependencies":{"left-pad":"1.3.0"}}`,
		"web/yarn.lock":              "",
		"docs/package.json":          `{"name":"docs","scripts":{"test":"node --test"}}`,
		"raw/package.json":           `{"name":"raw","dependencies":{"left-pad":"1.3.0"}}`,
		"raw/.gitignore":             "!node_modules/\n",
		"api/requirements.txt":       "# none\n",
		"api/requirements-dev.txt":   "pytest>=7\n",
		"api/requirements/lint.txt":  "ruff>=0.4\n",
		"api/requirements/sub/x.txt": "black\n",
		"api/pyproject.toml":         apiPyproject,
		"api/test-requirements.txt":  "hypothesis\n",
		"api/tox.ini":                "[testenv]\ndeps =\n    pytest-mock\n",
		"app/Gemfile":                "gem \"rspec\"\n",
		"app/Gemfile.lock":           "GEM\n",
		"lib/Gemfile":                "gem \"rspec\"\n",
		"php/composer.json":          `{"require":{"php":">=8.1"}}`,
		// setup.py alone, as python-slugify declares itself, and .venv
		// not ignored (python-slugify ignores env/): the commit leaves
		// it out, as the base tracks nothing there.
		"legacy/setup.py":   "from setuptools import setup\n\nsetup(name='legacy', install_requires=['text-unidecode>=1.3'])\n",
		"legacy/.gitignore": "!.venv/\nenv/\n",
		"bare/setup.py":     "from setuptools import setup\n\nsetup(name='bare')\n",
		// A .venv the repository tracks a file in: setup would change it.
		"kept/setup.py":     "from setuptools import setup\n\nsetup(name='kept', install_requires=['attrs'])\n",
		"kept/.gitignore":   "!.venv/\n",
		"kept/.venv/README": "ours\n",
	})
	trees := t.TempDir()
	repo, err := gitrepo.Clone(context.Background(), gitrepo.CloneOptions{URL: origin, Worktree: filepath.Join(trees, "work"), GitDir: filepath.Join(t.TempDir(), "git")})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := sandbox.OpenWorkspace(repo.Worktree())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	sc, err := secrets.Default()
	if err != nil {
		t.Fatal(err)
	}
	detection := verify.Detection{Projects: []verify.Project{
		{Dir: ".", Language: "go"},
		{Dir: "web", Language: "node"},
		{Dir: "docs", Language: "node"},
		// node_modules not ignored: it would enter the commit.
		{Dir: "raw", Language: "node"},
		{Dir: "api", Language: "python"},
		{Dir: "legacy", Language: "python"},
		// A setup.py that declares nothing to install.
		{Dir: "bare", Language: "python"},
		{Dir: "kept", Language: "python"},
		{Dir: "app", Language: "ruby", Setup: &verify.Setup{Dir: "app", Command: "cd app && bundle install", Manifests: []string{"app/Gemfile", "app/Gemfile.lock"}}},
		// No Gemfile.lock: bundle install would write one into the change.
		{Dir: "lib", Language: "ruby", Setup: &verify.Setup{Dir: "lib", Command: "cd lib && bundle install", Manifests: []string{"lib/Gemfile", "lib/Gemfile.lock"}}},
		{Dir: "php", Language: "php", Setup: &verify.Setup{Dir: "php", Command: "cd php && composer install", Manifests: []string{"php/composer.json"}}},
	}}
	cache := &Executor{CacheVolume: func(string) string { return "cache" }}
	off := false
	for name, tc := range map[string]struct {
		cfg  config.Config
		e    *Executor
		want []report.DetectedCommand
	}{
		"detected": {e: cache, want: []report.DetectedCommand{
			{Command: goDownload, Manifest: "go.mod"},
			{Command: "cd 'web' && yarn install --frozen-lockfile --ignore-scripts", Manifest: "web/package.json"},
			{Command: "cd 'api' && " + pipInstall + "-r 'requirements/lint.txt'", Manifest: "api/requirements/lint.txt"},
			{Command: "cd 'api' && " + pipInstall + "-r 'requirements-dev.txt'", Manifest: "api/requirements-dev.txt"},
			{Command: "cd 'api' && " + pipInstall + "-r 'test-requirements.txt'", Manifest: "api/test-requirements.txt"},
			{Command: "cd 'api' && " + pipInstall + "'pytest-cov'", Manifest: "api/pyproject.toml", Group: "[project.optional-dependencies] test"},
			{Command: "cd 'api' && " + pipInstall + "'pytest-mock'", Manifest: "api/tox.ini", Group: "[testenv] deps"},
			{Command: "cd 'api' && " + pipInstall + "-e .", Manifest: "api/pyproject.toml"},
			{Command: "cd 'legacy' && " + pipInstall + "-e .", Manifest: "legacy/setup.py"},
			{Command: "cd app && bundle install", Manifest: "app/Gemfile"},
		}},
		"no cache volume": {e: &Executor{}, want: []report.DetectedCommand{
			{Command: "cd 'web' && yarn install --frozen-lockfile --ignore-scripts", Manifest: "web/package.json"},
			{Command: "cd 'api' && " + pipInstall + "-r 'requirements/lint.txt'", Manifest: "api/requirements/lint.txt"},
			{Command: "cd 'api' && " + pipInstall + "-r 'requirements-dev.txt'", Manifest: "api/requirements-dev.txt"},
			{Command: "cd 'api' && " + pipInstall + "-r 'test-requirements.txt'", Manifest: "api/test-requirements.txt"},
			{Command: "cd 'api' && " + pipInstall + "'pytest-cov'", Manifest: "api/pyproject.toml", Group: "[project.optional-dependencies] test"},
			{Command: "cd 'api' && " + pipInstall + "'pytest-mock'", Manifest: "api/tox.ini", Group: "[testenv] deps"},
			{Command: "cd 'api' && " + pipInstall + "-e .", Manifest: "api/pyproject.toml"},
			{Command: "cd 'legacy' && " + pipInstall + "-e .", Manifest: "legacy/setup.py"},
			{Command: "cd app && bundle install", Manifest: "app/Gemfile"},
		}},
		"configured":  {e: cache, cfg: config.Config{Setup: []string{"make deps"}}},
		"network off": {e: cache, cfg: config.Config{SetupNetwork: &off}},
	} {
		t.Run(name, func(t *testing.T) {
			r := &run{e: tc.e, clone: cloneResult{cfg: tc.cfg, detection: detection}, ws: ws, repo: repo, scanner: sc}
			if got := r.detectSetup(); !slices.Equal(got, tc.want) {
				t.Errorf("detectSetup() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
