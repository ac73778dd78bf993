// Package eval measures Patchwright on a held-out task suite (docs/design.md §4.9):
// it validates each task, runs it N times through the pipeline of
// `patchwright run` behind the Runner seam, lays the hidden tests over each
// result in a fresh sandbox, and scores the runs with Wilson intervals and
// paired McNemar tests.
package eval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Task is one benchmark task, loaded from a task directory or from a
// SWE-bench instance.
type Task struct {
	// ID names the task: its directory's name or the instance_id.
	ID string
	// Dir is the task directory; empty for a JSONL instance.
	Dir string
	// Repo is the repository: an absolute local path or a git URL.
	Repo string
	// Commit is the base commit's full SHA.
	Commit string
	// Title and Body are the issue the run is given.
	Title, Body string
	// HiddenFiles are laid over the result as whole files, by slash path
	// relative to the repository root. Exactly one of HiddenFiles and
	// HiddenPatch is set.
	HiddenFiles map[string][]byte
	// HiddenPatch is a unified diff applied to the result.
	HiddenPatch []byte
	// HiddenRun is the FAIL_TO_PASS command.
	HiddenRun string
	// ExistingTests is the PASS_TO_PASS command; empty means the
	// repository's own checks (docs/design.md §4.3).
	ExistingTests string
	Category      string
	Language      string
	// Image is the task's sandbox image; empty for none.
	Image string
	// MaxSteps caps the run's model turns; 0 for the repository's limit.
	MaxSteps int
	// FixPatch is the reference fix, used only to validate the task.
	FixPatch []byte
}

// Categories and Languages are the values task.yml accepts.
var (
	Categories = []string{"bug", "feature", "refactor"}
	Languages  = []string{"go", "python", "javascript", "typescript", "rust", "java"}
)

// taskFile is task.yml as written.
type taskFile struct {
	Repo        string `yaml:"repo"`
	Commit      string `yaml:"commit"`
	HiddenTests struct {
		Files string `yaml:"files"`
		Patch string `yaml:"patch"`
		Run   string `yaml:"run"`
	} `yaml:"hidden_tests"`
	ExistingTests string `yaml:"existing_tests"`
	Category      string `yaml:"category"`
	Language      string `yaml:"language"`
	Image         string `yaml:"image"`
	MaxSteps      int    `yaml:"max_steps"`
}

var shaRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// Load reads a suite: a directory holding task directories (or one task
// directory itself, recognised by its task.yml), or a SWE-bench JSONL file
// whose repositories are clones in reposDir named owner__repo. Tasks come
// back sorted by ID. A malformed task is an error naming the file: the
// suite's author fixes it before anything runs.
func Load(path, reposDir string) ([]*Task, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--tasks: %w", err)
	}
	if !info.IsDir() {
		if reposDir == "" {
			return nil, fmt.Errorf("--tasks %s: a JSONL file needs --repos DIR (the local clones, named owner__repo)", path)
		}
		return LoadJSONL(path, reposDir)
	}
	if reposDir != "" {
		return nil, errors.New("--repos is only for --tasks FILE.jsonl")
	}
	if _, err := os.Stat(filepath.Join(path, "task.yml")); err == nil {
		t, err := LoadTaskDir(path)
		if err != nil {
			return nil, err
		}
		return []*Task{t}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("--tasks: %w", err)
	}
	var tasks []*Task
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		t, err := LoadTaskDir(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("--tasks %s: no task directories (each holds a task.yml and an issue.md)", path)
	}
	return tasks, nil
}

// LoadTaskDir reads one task directory (docs/design.md §4.9). Unknown keys in
// task.yml are errors, not ignored: a misspelt key would silently change
// what is measured.
func LoadTaskDir(dir string) (*Task, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, "task.yml")
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s is not a task directory: it has no task.yml (--tasks takes a directory of task directories, or one of them)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", filepath.Base(dir), err)
	}
	tf, err := parseTaskFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t, err := tf.task(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

func parseTaskFile(data []byte) (taskFile, error) {
	var tf taskFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&tf); err != nil {
		if errors.Is(err, io.EOF) {
			return tf, errors.New("empty file")
		}
		return tf, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return tf, errors.New("more than one YAML document")
	}
	return tf, nil
}

// task checks every field and reads the files task.yml names.
func (tf taskFile) task(dir string) (*Task, error) {
	t := &Task{
		ID: filepath.Base(dir), Dir: dir, Commit: tf.Commit,
		HiddenRun: strings.TrimSpace(tf.HiddenTests.Run), ExistingTests: strings.TrimSpace(tf.ExistingTests),
		Category: tf.Category, Language: tf.Language, Image: tf.Image, MaxSteps: tf.MaxSteps,
	}
	if err := checkFields(tf); err != nil {
		return nil, err
	}
	t.Repo = tf.Repo
	if !isURL(tf.Repo) {
		t.Repo = filepath.Join(dir, filepath.FromSlash(tf.Repo))
		if filepath.IsAbs(tf.Repo) {
			t.Repo = filepath.Clean(tf.Repo)
		}
	}
	var err error
	if t.Title, t.Body, err = readIssue(filepath.Join(dir, "issue.md")); err != nil {
		return nil, err
	}
	if tf.HiddenTests.Files != "" {
		if t.HiddenFiles, err = readHiddenDir(dir, tf.HiddenTests.Files); err != nil {
			return nil, err
		}
	} else if t.HiddenPatch, err = readInside(dir, tf.HiddenTests.Patch); err != nil {
		return nil, err
	}
	fix, err := os.ReadFile(filepath.Join(dir, "fix.patch"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	t.FixPatch = fix
	return t, nil
}

func checkFields(tf taskFile) error {
	h := tf.HiddenTests
	switch {
	case tf.Repo == "":
		return errors.New("repo is required: a local git repository (relative to the task directory) or a git URL")
	case !shaRE.MatchString(tf.Commit):
		return fmt.Errorf("commit %q: want the base commit's full SHA (40 lower-case hex digits)", tf.Commit)
	case (h.Files == "") == (h.Patch == ""):
		return errors.New("hidden_tests: give exactly one of files (a directory) and patch (a unified diff)")
	case strings.TrimSpace(h.Run) == "":
		return errors.New("hidden_tests.run is required: the command that fails before the fix and passes after")
	case !slices.Contains(Categories, tf.Category):
		return fmt.Errorf("category %q: want one of %s", tf.Category, strings.Join(Categories, ", "))
	case !slices.Contains(Languages, tf.Language):
		return fmt.Errorf("language %q: want one of %s", tf.Language, strings.Join(Languages, ", "))
	case tf.MaxSteps < 0:
		return fmt.Errorf("max_steps %d: must be positive", tf.MaxSteps)
	}
	return nil
}

func isURL(s string) bool {
	return strings.Contains(s, "://") || strings.HasPrefix(s, "git@")
}

// readIssue reads issue.md: "# Title" on the first line, then the body.
func readIssue(path string) (title, body string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	return parseIssue(string(data))
}

func parseIssue(text string) (title, body string, err error) {
	text = strings.TrimLeft(strings.ReplaceAll(text, "\r\n", "\n"), "\n \t")
	first, rest, _ := strings.Cut(text, "\n")
	title, ok := strings.CutPrefix(strings.TrimSpace(first), "# ")
	title = strings.TrimSpace(title)
	if !ok || title == "" {
		return "", "", errors.New(`issue.md: the first line must be the title as "# Title"`)
	}
	return title, strings.TrimSpace(rest), nil
}

// inside resolves rel against dir and refuses anything that leaves it.
func inside(dir, rel string) (string, error) {
	if filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(strings.TrimSuffix(rel, "/"))) {
		return "", fmt.Errorf("%q must be a path inside the task directory", rel)
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

func readInside(dir, rel string) ([]byte, error) {
	p, err := inside(dir, rel)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("hidden_tests.patch: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("hidden_tests.patch %s is empty", rel)
	}
	return data, nil
}

// readHiddenDir reads every regular file under the hidden directory.
// Symlinks are refused: what a link points at on the author's machine is
// not what the sandbox would see.
func readHiddenDir(dir, rel string) (map[string][]byte, error) {
	root, err := inside(dir, rel)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("hidden_tests.files: %s is not a regular file", p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(r)] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hidden_tests.files: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("hidden_tests.files: %s holds no files", rel)
	}
	return files, nil
}
