package pipeline

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/internal/text"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/verify/findings"
)

// Detected first setup (issue 24: the product meets repositories as they
// are). Without `setup:` in the default branch's configuration, a
// repository whose dependencies are not committed (node_modules, a
// virtualenv, the module cache) would reach the offline checks without
// them. So the setup phase runs detection's own download command
// (downloadCommand, or verify.Detection.SetupFor) for each detected
// project whose manifest declares dependencies, with the same setup
// network, allowlist and trust rules as configured setup. A project whose
// manifests declare none costs no setup container.
//
// Covered: Go (go.mod), Node (package.json, by its lock file; npm
// install without one), Python (requirements*.txt, requirements/*.txt,
// pyproject.toml), Rust (Cargo.toml), Ruby (Gemfile) and PHP
// (composer.json). Maven and Gradle are left out: their download commands
// are slow and fetch plugins a repository's checks may not need.

// detectSetup is the detected first setup's commands, each with the
// manifest that called for it (ExitCode unset); nil when setup is
// configured, the setup network is off, or no manifest declares
// dependencies.
func (r *run) detectSetup() []report.DetectedCommand {
	if len(r.clone.cfg.Setup) > 0 || !r.clone.cfg.Network() {
		return nil
	}
	has, done := inTree(r.ws.Dir())
	defer done()
	read, closeTree := treeReader(r.ws.Dir())
	defer closeTree()
	var out []report.DetectedCommand
	seen := map[string]bool{}
	for _, p := range r.clone.detection.Projects {
		for _, m := range r.projectManifests(p.Dir, p.Language) {
			if !r.outputIgnored(m) {
				continue
			}
			// The one table of commands: dependency setup's after the
			// change (deps.go).
			for _, c := range r.manifestCommands(read, has, m) {
				if !seen[c.Command] {
					seen[c.Command] = true
					c.Manifest = r.shownPath(c.Manifest)
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// projectManifests are the manifests of the project in dir that declare
// dependencies, from the repository root. Go and Rust fetch into the
// cache volume only, so without one they have nothing to keep. A Python
// project's are its requirements files and its project file (the first
// of pyProjectFiles it has), when that declares dependencies or the
// project declares test requirements (pyDeclares).
func (r *run) projectManifests(dir, lang string) []string {
	var names []string
	switch lang {
	case "go":
		names = []string{"go.mod"}
	case "rust":
		names = []string{"Cargo.toml"}
	case "node":
		names = []string{"package.json"}
	case "ruby":
		names = []string{"Gemfile"}
	case "php":
		names = []string{"composer.json"}
	case "python":
		names = r.requirementFiles(dir)
	}
	if (lang == "go" || lang == "rust") && r.sharedCache() == "" {
		return nil
	}
	var out []string
	for _, n := range names {
		m := path.Join(dir, n)
		if b, err := r.ws.ReadFile(m); err == nil && findings.DeclaresDependencies(m, b) {
			out = append(out, m)
		}
	}
	if lang == "python" {
		out = append(out, r.pyProjectFile(dir)...)
	}
	return out
}

// pyProjectFile is the Python project file of dir (the first of
// pyProjectFiles it has) when it calls for a detected install
// (pyDeclares); none otherwise.
func (r *run) pyProjectFile(dir string) []string {
	read := func(p string) []byte {
		b, err := r.ws.ReadFile(p)
		if err != nil {
			return nil
		}
		return b
	}
	for _, n := range pyProjectFiles {
		m := path.Join(dir, n)
		if src := read(m); src != nil {
			if pyDeclares(read, m, src) {
				return []string{m}
			}
			return nil
		}
	}
	return nil
}

// requirementFiles are the requirements files of the project in dir
// (findings.IsRequirements), relative to it: requirements*.txt in dir and
// the files of its requirements/ directory.
func (r *run) requirementFiles(dir string) []string {
	var out []string
	split := path.Join(dir, "requirements")
	err := r.ws.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && p != split {
			return fs.SkipDir
		}
		if !d.IsDir() && findings.IsRequirements(p) {
			out = append(out, relTo(dir, p))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return out
}

// outputIgnored reports whether what the download command for manifest
// m writes into the tree stays out of the change: the commit is the work
// tree less what .gitignore excludes, so node_modules or vendor/ that
// the repository does not ignore, or a lock file that bundle install,
// cargo fetch or composer install would write where none is committed,
// would be committed as the model's. Such a project gets no detected
// setup. A .venv is the exception: many Python projects ignore venv/ or
// env/ and not it (python-slugify), and the commit leaves out what
// commands write there anyway where the base commit tracks nothing in
// it (venvLeftOut).
func (r *run) outputIgnored(m string) bool {
	dir := projectDir(m)
	var dirs, locks []string
	if d := dependencyDirOf(m); d != "" {
		dirs = []string{d}
	}
	switch path.Base(m) {
	case "composer.json":
		locks = []string{"composer.lock"}
	case "Gemfile":
		locks = []string{"Gemfile.lock"}
	case "Cargo.toml":
		locks = []string{"Cargo.lock"}
	}
	for _, l := range locks {
		if _, err := r.ws.Stat(path.Join(dir, l)); err != nil {
			dirs = append(dirs, l)
		}
	}
	for _, d := range dirs {
		p := path.Join(dir, d)
		if d == ".venv" && r.venvLeftOut(p) {
			continue
		}
		if ok, err := r.repo.Ignores(p); err != nil || !ok {
			return false
		}
	}
	return true
}

// venvLeftOut reports whether the base commit tracks nothing in the
// virtualenv directory p, so that what setup writes there is in the
// pristine tree (never the model's change) and what later commands write
// there is an output the commit leaves out (commandOutput, .venv being
// one of outputDirs).
func (r *run) venvLeftOut(p string) bool {
	paths, err := r.repo.BasePaths()
	if err != nil {
		return false
	}
	return !slices.ContainsFunc(paths, func(b string) bool { return b == p || strings.HasPrefix(b, p+"/") })
}

// setupScripts are the first setup's commands: the configured ones, else
// the detected ones.
func (r *run) setupScripts() []string {
	if len(r.clone.cfg.Setup) > 0 {
		return r.clone.cfg.Setup
	}
	out := make([]string, len(r.clone.detected))
	for i, c := range r.clone.detected {
		out[i] = c.Command
	}
	return out
}

// runDetectedSetup runs the detected first setup in the setup container
// and returns the commands that ran, with their exit codes.
// A command that fails does not end the run, as a configured one does:
// the repository never asked for it, so it is recorded, the next one
// runs, and the baseline says whether the checks needed it.
func (r *run) runDetectedSetup(ctx context.Context) ([]report.DetectedCommand, error) {
	var ran []report.DetectedCommand
	for _, c := range r.clone.detected {
		res, output, err := r.setupCommand(ctx, c.Command)
		if err != nil {
			return ran, err
		}
		c.ExitCode, c.TimedOut = res.ExitCode, res.TimedOut
		if c.Failed() {
			c.Error = failureLine(output)
		}
		ran = append(ran, c)
	}
	_, err := r.ledger.Append(&ledger.SetupDetected{Commands: ran})
	return ran, err
}

// failureRE matches a line in which a download tool says why it failed:
// pip's and composer's "ERROR:"/"Error:", npm's "npm error"/"npm ERR!",
// cargo's "error:", bundler's "Could not find gem …" and "Could not
// fetch specs …"; or the shell says the tool is not in the image
// ("/bin/sh: 1: python3: not found", on an image without Python).
var failureRE = regexp.MustCompile(`^(?:ERROR:|Error:|error:|error\[|npm error |npm ERR! |Could not (?:find|fetch|reach|resolve) |fatal: |(?:\S*/)?(?:sh|dash|bash): (?:\d+: |line \d+: )?\S+: (?:command )?not found$)`)

// maxFailureLine bounds the line failureLine gives, in bytes.
const maxFailureLine = 200

// composerErrorRE is the head of composer's boxed error ("In
// RemoteFilesystem.php line 476:"); the message is the lines after it.
var composerErrorRE = regexp.MustCompile(`^In \S+\.php line \d+:$`)

// failureLine is the last line of a failed setup command's output that
// says why it failed (for composer, its boxed message as one line), one
// line and bounded; "" when none does: a reader then has the command's
// whole output in the ledger.
func failureLine(output string) string {
	lines := strings.Split(output, "\n")
	last := ""
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		switch {
		case composerErrorRE.MatchString(line):
			var msg []string
			for i+1 < len(lines) && (len(msg) == 0 || strings.TrimSpace(lines[i+1]) != "") {
				i++
				msg = append(msg, lines[i])
			}
			last = strings.Join(msg, " ")
		// npm ends with where its log is, which says nothing of why.
		case failureRE.MatchString(line) && !strings.Contains(line, "A complete log of this run"):
			last = line
		}
	}
	return text.Head(text.Line(last), maxFailureLine)
}
