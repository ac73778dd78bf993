package pipeline

import (
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify/findings"
)

// Whether a dependency setup command runs its tree's code (issue 40). On
// the model's tree a trusted command is only as trusted as the files it
// reads: `pip install -e .` imports the build backend pyproject.toml
// names, a Makefile is code, npm runs programs an .npmrc names even with
// --ignore-scripts, cargo reads .cargo/config.toml. What such a command
// installs may be whatever the change wants the checks to see.

// treeCodeInput is what runsTreeCode judges: one command of a dependency
// setup, whether it is the repository's configured `setup:` (not one of
// the download commands of deps.go), the paths the change added or
// edited, and a reader of the changed tree's files.
type treeCodeInput struct {
	Command    string
	Configured bool
	Changed    []string
	// Read returns a file of the tree the command runs on; nil when it
	// cannot be read.
	Read func(p string) []byte
}

// runsTreeCode reports whether the command may run code of its tree, and
// why, in words for a reviewer. It is the one rule; the table of
// TestRunsTreeCode pins it.
func runsTreeCode(in treeCodeInput) (bool, string) {
	if in.Configured {
		return true, "a configured setup command runs whatever the tree's files tell it to (a Makefile, a script, a build file)"
	}
	dir, cmd := splitCd(in.Command)
	switch {
	case cmd == goDownload:
		return false, ""
	case isNodeInstall(cmd):
		return changedNamed(in.Changed, nodeConfig, "npm, yarn and pnpm run programs their configuration names, even with --ignore-scripts")
	case strings.HasPrefix(cmd, pipInstall+"-e "):
		return true, "pip runs the build backend that the project's pyproject.toml names"
	case strings.HasPrefix(cmd, pipInstall+"-r "):
		return pipRunsTreeCode(in, dir, strings.TrimPrefix(cmd, pipInstall+"-r "))
	case cmd == "cargo fetch":
		return changedNamed(in.Changed, cargoConfig, "cargo runs programs its configuration and toolchain file name")
	case strings.HasPrefix(cmd, "mvn "):
		return mavenRunsTreeCode(in)
	case strings.HasPrefix(cmd, "composer ") && strings.Contains(cmd, "--no-scripts") && strings.Contains(cmd, "--no-plugins"):
		return false, ""
	}
	return true, "it runs the project's build files (a Gemfile, composer scripts and plugins, a Gradle build are code)"
}

// goDownload fills the module cache without running any code of the tree
// or of a toolchain the tree's go.mod asks for, whatever GOFLAGS the
// image sets. Its settings are the phase's alone (goPinned): no go.work
// of the tree points it at modules its go.mod does not name, and no go
// env file an earlier command of its container wrote changes its route.
const goDownload = goPinned + " go mod download"

// goPinned is the environment of every go command Patchwright itself
// runs on a tree: the image's toolchain and GOFLAGS, no workspace file
// (a go.work's replace names a module the Go proxy rule, goproxy.go,
// never sees) and no go env file (`go env -w` by a command before it);
// the container's environment (the image's, and the hold of goproxy.go)
// alone decides.
const goPinned = "GOTOOLCHAIN=local GOFLAGS= GOWORK=off GOENV=off"

// splitCd takes apart the "cd 'dir' && " deps.go puts before a project's
// command.
func splitCd(script string) (dir, cmd string) {
	m := cdPrefix.FindStringSubmatch(script)
	if m == nil {
		return ".", script
	}
	return strings.ReplaceAll(m[1], `'\''`, "'"), script[len(m[0]):]
}

var cdPrefix = regexp.MustCompile(`^cd '((?:[^']|'\\'')*)' && `)

func isNodeInstall(cmd string) bool {
	return slices.Contains([]string{npmCI, npmNoLock, yarnInstall, pnpmInstall}, cmd)
}

// nodeConfig names the files npm, yarn and pnpm read that can make them
// run a program: .npmrc (script-shell, git, node-options), yarn's rc
// files (yarnPath runs any script as yarn) and plugins, pnpm's hooks.
func nodeConfig(p string) bool {
	switch path.Base(p) {
	case ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".pnpmfile.js", ".pnpmfile.mjs":
		return true
	}
	return strings.HasPrefix(p, ".yarn/") || strings.Contains(p, "/.yarn/")
}

// cargoConfig names the files cargo reads that can make it run a
// program: .cargo/config(.toml) in any directory above the project
// (credential providers, git-fetch-with-cli), and the toolchain file
// (a toolchain may be a path).
func cargoConfig(p string) bool {
	switch path.Base(p) {
	case "rust-toolchain", "rust-toolchain.toml":
		return true
	case "config", "config.toml":
		return path.Base(path.Dir(p)) == ".cargo"
	}
	return false
}

// changedNamed says the command runs the tree's code when the change
// added or edited a file named.
func changedNamed(changed []string, named func(string) bool, why string) (bool, string) {
	for _, p := range changed {
		if named(p) {
			return true, why + ", and the change edits " + p
		}
	}
	return false, ""
}

// pipRunsTreeCode judges `pip install -r FILE` in the project dir: pip
// installs from the index, which runs no file of the tree, unless the
// requirements file names something else (a path, an editable, a URL
// or VCS link, a directory of wheels, another file of options), or the
// change writes into the virtualenv pip itself runs from.
func pipRunsTreeCode(in treeCodeInput, dir, quoted string) (bool, string) {
	venv := path.Join(dir, ".venv") + "/"
	for _, p := range in.Changed {
		if strings.HasPrefix(p, venv) {
			return true, "pip runs from the project's virtualenv, and the change edits " + p
		}
	}
	file := path.Join(dir, strings.ReplaceAll(strings.Trim(quoted, "'"), `'\''`, "'"))
	if !slices.Contains(in.Changed, file) {
		return false, ""
	}
	var b []byte
	if in.Read != nil {
		b = in.Read(file)
	}
	if b == nil {
		return true, "pip reads " + file + ", which the change edits and which could not be read to judge it"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line, _, _ = strings.Cut(line, "#"); !plainRequirement(strings.TrimSpace(line)) {
			return true, "pip builds what " + file + " names beside the index (" + strings.TrimSpace(line) + "), which the change edits"
		}
	}
	return false, ""
}

// plainRequirement: a blank line, a requirement from the index (a name,
// extras, a version and markers), or an option that only chooses the
// index.
func plainRequirement(line string) bool {
	if line == "" || requirementRE.MatchString(line) {
		return true
	}
	opt, _, _ := strings.Cut(strings.ReplaceAll(line, "=", " "), " ")
	return slices.Contains([]string{"-i", "--index-url", "--extra-index-url", "--trusted-host", "--pre", "--prefer-binary", "--only-binary", "--require-hashes"}, opt)
}

// requirementRE is a PEP 508 requirement without a URL: a name, extras,
// version specifiers and markers (no "@", and no path-like name).
var requirementRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[A-Za-z0-9._,\s-]*\])?\s*([<>=!~][^@]*|;[^@]*)?$`)

// mavenRunsTreeCode: resolving a pom's dependencies and plugins runs
// none of them, but build extensions (in a pom or .mvn/extensions.xml)
// and .mvn's JVM and Maven options are loaded when Maven starts.
func mavenRunsTreeCode(in treeCodeInput) (bool, string) {
	for _, p := range in.Changed {
		if strings.HasPrefix(p, ".mvn/") || strings.Contains(p, "/.mvn/") {
			return true, "Maven loads the extensions and options of .mvn, and the change edits " + p
		}
		if path.Ext(p) != ".xml" || in.Read == nil {
			continue
		}
		if b := in.Read(p); b == nil || strings.Contains(string(b), "<extension") {
			return true, "Maven loads the build extensions a pom names when it starts, and the change edits " + p
		}
	}
	return false, ""
}

// writtenPaths are the paths changes add or edit: a deletion runs
// nothing.
func writtenPaths(changes []gitrepo.Change) []string {
	var out []string
	for _, c := range changes {
		if c.Kind != gitrepo.Deleted {
			out = append(out, c.Path)
		}
	}
	return out
}

// KindUntrustedSetup is the finding of a run whose final checks read
// what dependency setup after the change installed while one of its
// commands ran code of the changed tree (runsTreeCode); verify/findings
// owns the kind and that it blocks verified.
const KindUntrustedSetup = findings.UntrustedSetup

// judgeTreeCode adds a KindUntrustedSetup finding when a command of the
// dependency setup on the final tree dir ran the tree's code.
func (r *run) judgeTreeCode(dir string, setup report.DependencySetup) error {
	read, done := treeReader(dir)
	defer done()
	var why []string
	for _, c := range setup.Commands {
		ok, reason := runsTreeCode(treeCodeInput{Command: c.Command, Configured: setup.Configured, Changed: writtenPaths(r.modelChanges()), Read: read})
		if ok {
			why = append(why, "`"+shortCommand(c.Command)+"` ("+reason+")")
		}
	}
	if len(why) == 0 {
		return nil
	}
	f := findings.Finding{Kind: KindUntrustedSetup, Detail: "The dependencies the final checks used were installed by code the change controls: dependency setup after the change ran " +
		strings.Join(why, " and ") + ", so what it installed may be what the change wants the checks to see."}
	if _, err := r.ledger.Append(&ledger.FindingEvent{Finding: f}); err != nil {
		return err
	}
	r.fin.evidence = append(r.fin.evidence, f)
	return nil
}

// shortCommand is a download command as a reviewer reads it: pipInstall's
// virtualenv and report options left out.
func shortCommand(cmd string) string {
	return strings.Replace(cmd, pipInstall, "pip install ", 1)
}

// maxJudgedBytes bounds a file runsTreeCode reads; a larger one is judged
// unreadable, so as running the tree's code.
const maxJudgedBytes = 1 << 20

// treeReader is a treeCodeInput.Read of the tree at dir, links not
// followed out of it.
func treeReader(dir string) (read func(p string) []byte, done func()) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return func(string) []byte { return nil }, func() {}
	}
	return func(p string) []byte {
		info, err := root.Lstat(p)
		if err != nil || !info.Mode().IsRegular() || info.Size() > maxJudgedBytes {
			return nil
		}
		b, err := root.ReadFile(p)
		if err != nil {
			return nil
		}
		return b
	}, func() { root.Close() }
}
