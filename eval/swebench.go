package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// instance is one SWE-bench line. Other fields of the dataset (version,
// hints_text, created_at, …) are ignored: they do not change what is run.
type instance struct {
	InstanceID       string          `json:"instance_id"`
	Repo             string          `json:"repo"`
	BaseCommit       string          `json:"base_commit"`
	ProblemStatement string          `json:"problem_statement"`
	TestPatch        string          `json:"test_patch"`
	FailToPass       json.RawMessage `json:"FAIL_TO_PASS"`
	PassToPass       json.RawMessage `json:"PASS_TO_PASS"`
}

var instanceIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,200}$`)

// LoadJSONL reads SWE-bench instances. Each instance's repository is the
// local clone reposDir/owner__repo; test_patch becomes the hidden patch,
// and FAIL_TO_PASS and PASS_TO_PASS become pytest invocations of exactly
// those test IDs (SWE-bench's own harness does the same per repository;
// a task that needs another runner is written as a task directory).
func LoadJSONL(path, reposDir string) ([]*Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--tasks: %w", err)
	}
	defer f.Close()
	repos, err := filepath.Abs(reposDir)
	if err != nil {
		return nil, err
	}
	var tasks []*Task
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		t, err := parseInstance([]byte(text), repos)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if seen[t.ID] {
			return nil, fmt.Errorf("%s:%d: instance_id %q appears twice", path, line, t.ID)
		}
		seen[t.ID] = true
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s holds no instances", path)
	}
	return tasks, nil
}

func parseInstance(data []byte, repos string) (*Task, error) {
	var in instance
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, err
	}
	switch {
	case !instanceIDRE.MatchString(in.InstanceID):
		return nil, fmt.Errorf("instance_id %q: want letters, digits, '.', '_' or '-'", in.InstanceID)
	case strings.Count(in.Repo, "/") != 1 || strings.Contains(in.Repo, ".."):
		return nil, fmt.Errorf("%s: repo %q: want owner/name", in.InstanceID, in.Repo)
	case !shaRE.MatchString(in.BaseCommit):
		return nil, fmt.Errorf("%s: base_commit %q: want a full SHA", in.InstanceID, in.BaseCommit)
	case strings.TrimSpace(in.TestPatch) == "":
		return nil, fmt.Errorf("%s: test_patch is empty", in.InstanceID)
	}
	f2p, err := testIDs(in.FailToPass)
	if err != nil || len(f2p) == 0 {
		return nil, fmt.Errorf("%s: FAIL_TO_PASS: want a non-empty list of test IDs", in.InstanceID)
	}
	p2p, err := testIDs(in.PassToPass)
	if err != nil {
		return nil, fmt.Errorf("%s: PASS_TO_PASS: %w", in.InstanceID, err)
	}
	title, body := splitProblem(in.ProblemStatement)
	if title == "" {
		return nil, fmt.Errorf("%s: problem_statement is empty", in.InstanceID)
	}
	t := &Task{
		ID: in.InstanceID, Repo: filepath.Join(repos, strings.Replace(in.Repo, "/", "__", 1)),
		Commit: in.BaseCommit, Title: title, Body: body,
		HiddenPatch: []byte(in.TestPatch), HiddenRun: pytest(f2p),
		Category: "bug", Language: "python",
	}
	if len(p2p) > 0 {
		t.ExistingTests = pytest(p2p)
	}
	return t, nil
}

// testIDs reads a list of test IDs, given either as a JSON list or, as
// the SWE-bench dataset ships them, as a string holding a JSON list.
func testIDs(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err == nil {
		return ids, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New("want a list of test IDs")
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(s), &ids); err != nil {
		return nil, errors.New("want a list of test IDs")
	}
	return ids, nil
}

// pytest runs exactly the given test IDs, each quoted for the shell.
func pytest(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = shellQuote(id)
	}
	return "python -m pytest -rA -p no:cacheprovider " + strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// splitProblem makes an issue of a problem statement: its first non-empty
// line is the title (a leading "# " taken off), the rest the body.
func splitProblem(s string) (title, body string) {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	first, rest, _ := strings.Cut(s, "\n")
	title = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(first), "#"))
	if len(title) > 200 {
		title = title[:200]
	}
	return title, strings.TrimSpace(rest)
}
