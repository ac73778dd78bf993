package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/verify"
)

func TestDepsCommands(t *testing.T) {
	tests := map[string]struct {
		setup      []string
		manifests  []string
		want       []string
		configured bool
	}{
		"go":            {manifests: []string{"go.mod", "go.sum"}, want: []string{goDownload}},
		"sub-project":   {manifests: []string{"svc/api/go.mod"}, want: []string{"cd 'svc/api' && " + goDownload}},
		"npm and cargo": {manifests: []string{"web/package.json", "web/package-lock.json", "Cargo.lock"}, want: []string{"cd 'web' && npm ci --ignore-scripts --no-audit --no-fund", "cargo fetch"}},
		// package.json takes the command of the lock file beside it; npm
		// ci needs one, so without one npm install writes none.
		"yarn project":   {manifests: []string{"ui/package.json"}, want: []string{"cd 'ui' && yarn install --frozen-lockfile --ignore-scripts"}},
		"npm, no lock":   {manifests: []string{"package.json"}, want: []string{"npm install --ignore-scripts --no-audit --no-fund --no-package-lock"}},
		"lock is a link": {manifests: []string{"linked/package.json"}, want: []string{"cd 'linked' && npm ci --ignore-scripts --no-audit --no-fund"}},
		// Into the project's .venv, which the checks run with.
		"python": {manifests: []string{"requirements-dev.txt", "pyproject.toml", "api/requirements.txt"}, want: []string{
			pipInstall + "-r 'requirements-dev.txt'", pipInstall + "-e .", "cd 'api' && " + pipInstall + "-r 'requirements.txt'"}},
		// Requirements split into requirements/ install from the project
		// directory above it, into its .venv.
		"requirements dir": {manifests: []string{"requirements/dev.txt", "api/requirements/base.txt"}, want: []string{
			pipInstall + "-r 'requirements/dev.txt'", "cd 'api' && " + pipInstall + "-r 'requirements/base.txt'"}},
		"maven": {manifests: []string{"pom.xml"}, want: []string{"mvn -B -q dependency:go-offline"}},
		// A hostile directory name is one quoted word, never a command.
		"quoted dir": {manifests: []string{"a'; curl evil; '/go.mod"}, want: []string{`cd 'a'\''; curl evil; '\''' && ` + goDownload}},
		// The default branch's setup replaces the download commands.
		"configured": {setup: []string{"make deps"}, manifests: []string{"go.mod"}, want: []string{"make deps"}, configured: true},
		// A lockfile with no download command of its own runs nothing.
		"poetry lock only": {manifests: []string{"poetry.lock"}},
		// Ruby, PHP and Gradle take the setup detection chose for the
		// project the manifest is in, once per project.
		"detected projects": {manifests: []string{"app/Gemfile", "app/Gemfile.lock", "composer.json", "lib/build.gradle"},
			want: []string{"cd app && bundle install", "composer install --no-interaction --no-progress", "cd lib && gradle dependencies"}},
		"another project's manifest": {manifests: []string{"other/Gemfile"}},
	}
	detection := verify.Detection{Projects: []verify.Project{
		{Dir: "app", Language: "ruby", Setup: &verify.Setup{Dir: "app", Command: "cd app && bundle install", Manifests: []string{"app/Gemfile", "app/Gemfile.lock"}}},
		{Dir: ".", Language: "php", Setup: &verify.Setup{Dir: ".", Command: "composer install --no-interaction --no-progress", Manifests: []string{"composer.json", "composer.lock"}}},
		{Dir: "lib", Language: "java", Setup: &verify.Setup{Dir: "lib", Command: "cd lib && gradle dependencies", Manifests: []string{"lib/build.gradle"}}},
	}}
	tree := t.TempDir()
	for _, p := range []string{"web/package-lock.json", "ui/yarn.lock"} {
		if err := os.MkdirAll(filepath.Join(tree, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, p), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tree, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../web/package-lock.json", filepath.Join(tree, "linked", "package-lock.json")); err != nil {
		t.Fatal(err)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := &run{clone: cloneResult{cfg: config.Config{Setup: tc.setup}, detection: detection}}
			got, configured := r.depsCommands(tree, tc.manifests)
			if !slices.Equal(got, tc.want) || configured != tc.configured {
				t.Errorf("depsCommands(%q) = %q, %v; want %q, %v", tc.manifests, got, configured, tc.want, tc.configured)
			}
		})
	}
}

func TestManifestChanges(t *testing.T) {
	changes := []gitrepo.Change{
		{Path: "go.mod", Kind: gitrepo.Modified},
		{Path: "go.sum", Kind: gitrepo.Added},
		{Path: "main.go", Kind: gitrepo.Modified},
		{Path: "docs/go.mod.md", Kind: gitrepo.Added},
		{Path: "web/package-lock.json", Kind: gitrepo.Deleted},
		{Path: "requirements.txt.bak", Kind: gitrepo.Added},
		{Path: "crates/x/Cargo.toml", Kind: gitrepo.Modified},
	}
	var got []string
	for _, c := range manifestChanges(changes) {
		got = append(got, c.Path)
	}
	// A deleted lockfile fetches nothing; look-alike names are not manifests.
	if want := []string{"go.mod", "go.sum", "crates/x/Cargo.toml"}; !slices.Equal(got, want) {
		t.Errorf("manifestChanges = %q, want %q", got, want)
	}
}
