//go:build e2e

package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// TestNPMDetectedFirstSetup (issue 24): the base already depends on a
// package only a registry on a fake host serves (package.json and
// package-lock.json name it, node_modules is not committed), and
// .github/agent.yml has network.allow but no `setup:`. The setup phase
// runs the detected `npm ci` through the egress proxy, the baseline finds
// the package, the model's small change is verified, and the ledger and
// the body say the setup was detected, for package.json. Without the
// detected setup the baseline's `npm test` cannot find the package.
func TestNPMDetectedFirstSetup(t *testing.T) {
	sandboxtest.EndToEnd(t)
	reg := newNPMRegistry(t, filepath.Join(sandboxtest.ReposDir(), "js-deps", "package"))
	host := sandboxtest.FakeHost(t, reg)
	pkg, lock, code := jsDepsChange(t, reg, host)
	files := jsDepsFiles(t, host, "network:\n  allow: ['"+host+"']\n")
	files["package.json"], files["package-lock.json"], files["src/badge.js"] = pkg, lock, code
	repo := gitRepo(t, files)
	comment := strings.Replace(code, "// badge is the text of a name badge.", "// badge is the text of a name badge, the name title-cased.", 1)
	res, out, _ := scenario{
		repo:        repo,
		issue:       agent.Issue{Title: "Say what badge does", Body: "Its comment should say that names are title-cased."},
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       rewriteTurns(t, "src/badge.js", comment, "The comment says names are title-cased."),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; registry asked %q; ledger:\n%s", res.Outcome, res.Reason, reg.paths(), readLedger(t, out))
	}
	if !slices.Contains(reg.paths(), reg.tarballURL("")) {
		t.Errorf("the registry never served the tarball: %q", reg.paths())
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var detected []ledger.SetupDetected
	for _, rec := range log.Records {
		if rec.Type == ledger.TypeSetupDetected {
			var d ledger.SetupDetected
			if err := rec.Decode(&d); err != nil {
				t.Fatal(err)
			}
			detected = append(detected, d)
		}
	}
	if len(detected) != 1 || len(detected[0].Commands) != 1 || detected[0].Commands[0].Manifest != "package.json" ||
		!strings.HasPrefix(detected[0].Commands[0].Command, "npm ci ") || detected[0].Commands[0].Failed() {
		t.Fatalf("detected setup events %+v, want one passing npm ci for package.json", detected)
	}
	logSetupCost(t, out)
	body := readBody(t, out)
	for _, want := range []string{"**Dependencies**", "has no `setup:`, so Patchwright ran detected setup before the baseline", "`npm ci --ignore-scripts --no-audit --no-fund` (exit 0) because `package.json` declares dependencies"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Detected setup failed") || strings.Contains(body, "node_modules") {
		t.Errorf("body says detected setup failed, or names node_modules:\n%s", body)
	}
}

// TestNPMWithoutLockFile (issue 24): the base's package.json depends on
// a package only a registry on a fake host serves, but there is no lock
// file, where npm ci refuses to run. The detected first setup installs
// with npm install, writing no lock file, so the baseline finds the
// package; the model's change to package.json gets the same command in
// dependency setup after the change, and the commit holds no lock file.
func TestNPMWithoutLockFile(t *testing.T) {
	sandboxtest.EndToEnd(t)
	reg := newNPMRegistry(t, filepath.Join(sandboxtest.ReposDir(), "js-deps", "package"))
	host := sandboxtest.FakeHost(t, reg)
	pkg, _, code := jsDepsChange(t, reg, host)
	files := jsDepsFiles(t, host, "network:\n  allow: ['"+host+"']\n")
	delete(files, "package-lock.json")
	files["package.json"], files["src/badge.js"] = pkg, code
	repo := gitRepo(t, files)
	described := strings.Replace(pkg, `"private": true,`, `"private": true,
  "description": "Name badges, the names title-cased.",`, 1)
	res, out, _ := scenario{
		repo:        repo,
		issue:       agent.Issue{Title: "Describe the package", Body: "package.json should say what the package does."},
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       rewriteTurns(t, "package.json", described, "package.json describes the package."),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; registry asked %q; ledger:\n%s", res.Outcome, res.Reason, reg.paths(), readLedger(t, out))
	}
	if len(res.Checks) == 0 || !res.Checks[0].Passed {
		t.Errorf("checks %+v: the baseline did not pass", res.Checks)
	}
	body := readBody(t, out)
	if want := "`" + npmNoLock + "` (exit 0) because `package.json` declares dependencies"; !strings.Contains(body, want) {
		t.Errorf("body lacks %q:\n%s", want, body)
	}
	setups := dependencyEvents(t, out)
	if len(setups) != 1 || setups[0].Failed() || len(setups[0].Commands) != 1 || setups[0].Commands[0].Command != npmNoLock {
		t.Errorf("dependency setups %+v, want one passing %q", setups, npmNoLock)
	}
	if got := gitIn(t, repo, "ls-tree", "-r", "--name-only", res.HeadCommit); strings.Contains(got, "package-lock.json") || strings.Contains(got, "node_modules") {
		t.Errorf("the commit holds a lock file or node_modules:\n%s", got)
	}
	if !slices.Equal(res.FilesChanged, []string{"package.json"}) {
		t.Errorf("files changed %q, want package.json alone", res.FilesChanged)
	}
}

// TestPipDetectedFirstSetup (issue 24): the base's requirements.txt
// already names a package only an index on a fake host serves, and
// .github/agent.yml has network.allow but no `setup:`. The detected setup
// makes .venv and pip installs the package into it; the baseline and the
// final checks (detection's pytest) run with that .venv and pass.
func TestPipDetectedFirstSetup(t *testing.T) { pipDetectedFirstSetup(t, "requirements.txt") }

// TestPipRequirementsDirectory: the same with the requirements in
// requirements/dev.txt, as projects that split them keep them. Detection
// finds the file, and pip installs it from the project's directory into
// the .venv the checks run with.
func TestPipRequirementsDirectory(t *testing.T) { pipDetectedFirstSetup(t, "requirements/dev.txt") }

// pipDetectedFirstSetup is TestPipDetectedFirstSetup with the base's
// requirements at reqs.
func pipDetectedFirstSetup(t *testing.T, reqs string) {
	sandboxtest.EndToEnd(t)
	idx := newPyPIIndex(t, filepath.Join(sandboxtest.ReposDir(), "py-deps", "package"), "textcase", "1.0.0")
	host := sandboxtest.FakeHost(t, idx)
	files := pyDepsFiles(t, pyIndexLines(host)+"textcase==1.0.0\n", "network:\n  allow: ['"+host+"']\n")
	if reqs != "requirements.txt" {
		files[reqs] = files["requirements.txt"]
		delete(files, "requirements.txt")
	}
	code := "\"\"\"Name badges.\"\"\"\n\nfrom textcase import title\n\n\ndef badge(name):\n    \"\"\"The text of a name badge.\"\"\"\n    return \"Hello, \" + title(name)\n"
	files["badges/__init__.py"] = code
	doc := strings.Replace(code, "The text of a name badge.", "The text of a name badge, the name title-cased.", 1)
	res, out, _ := scenario{
		repo:        gitRepo(t, files),
		issue:       agent.Issue{Title: "Say what badge does", Body: "Its docstring should say that names are title-cased."},
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       rewriteTurns(t, "badges/__init__.py", doc, "The docstring says names are title-cased."),
	}.run(t)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified; index asked %q; ledger:\n%s", res.Outcome, res.Reason, idx.paths(), readLedger(t, out))
	}
	if !slices.Contains(idx.paths(), "/files/"+idx.wheelName()) {
		t.Errorf("the index never served the wheel: %q", idx.paths())
	}
	logSetupCost(t, out)
	body := readBody(t, out)
	for _, want := range []string{"has no `setup:`, so Patchwright ran detected setup", ".venv/bin/python -m pip install", "because `" + reqs + "` declares dependencies"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Detected setup failed") || strings.Contains(body, "| `.venv") {
		t.Errorf("body says detected setup failed, or lists .venv as changed:\n%s", body)
	}
}

// logSetupCost logs the sandbox and setup phases' times of the run in
// out: what a detected first setup costs a run (a figure, not asserted).
func logSetupCost(t *testing.T, out string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, FilePhases))
	if err != nil {
		t.Fatal(err)
	}
	var tm Timings
	if err := json.Unmarshal(b, &tm); err != nil {
		t.Fatal(err)
	}
	for _, p := range tm.Phases {
		if p.Phase == PhaseSandbox || p.Phase == PhaseSetup {
			t.Logf("%s phase: %d ms", p.Phase, p.DurationMS)
		}
	}
}
