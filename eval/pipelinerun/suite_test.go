package pipelinerun_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/eval/pipelinerun"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

var (
	diffFile = regexp.MustCompile(`(?m)^\+\+\+ b/(.+)$`)
	hunkHead = regexp.MustCompile(`(?m)^@@ .* @@.*$`)
)

// replay turns a fix.patch into tool calls, as a model would make them:
// read each file, one edit per hunk (its context and removed lines as
// old_text, its context and added lines as new_text), then finish.
func replay(t *testing.T, patch string) []pt.Turn {
	t.Helper()
	var turns []pt.Turn
	for _, part := range strings.Split(patch, "diff --git ")[1:] {
		path := diffFile.FindStringSubmatch(part)[1]
		turns = append(turns, call("read_file", map[string]string{"path": path}))
		for _, hunk := range hunkHead.Split(part, -1)[1:] {
			var old, new []string
			for _, line := range strings.Split(strings.TrimSuffix(hunk, "\n"), "\n")[1:] {
				switch {
				case strings.HasPrefix(line, "-"):
					old = append(old, line[1:])
				case strings.HasPrefix(line, "+"):
					new = append(new, line[1:])
				case strings.HasPrefix(line, " "), line == "":
					old = append(old, strings.TrimPrefix(line, " "))
					new = append(new, strings.TrimPrefix(line, " "))
				}
			}
			turns = append(turns, call("edit", edits(edit{path, strings.Join(old, "\n"), strings.Join(new, "\n")})))
		}
	}
	return append(turns, call("finish", map[string]string{"summary": "Applied the fix."}))
}

// perTask gives each task its own scripted model, so runs can go
// concurrently whatever order they finish in.
type perTask map[string]*pipelinerun.Runner

func (p perTask) Run(ctx context.Context, req eval.RunRequest) (eval.RunResult, error) {
	return p[req.Task.ID].Run(ctx, req)
}

// The headline test: a model that replays each task's reference
// fix through the tools, on twelve starter tasks (Go, Python and
// JavaScript) through the real pipeline and sandbox, resolves 12 of 12,
// and the interval is the published one for 12/12: 75.8%-100%.
func TestReferenceFixesThroughThePipeline(t *testing.T) {
	sandboxtest.EndToEnd(t)
	t.Parallel()
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	ids := []string{
		"go-backoff-cap", "go-lru-get-refreshes", "go-parse-size-binary", "go-split-quoted",
		"py-duration-units", "py-merge-intervals", "py-roman-nine", "py-semver-compare",
		"js-chunk-remainder", "js-deep-equal-types", "js-query-plus", "js-template-defaults",
	}
	suite := starterTasks(t, ids...)
	tasks, err := eval.Load(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	runners := perTask{}
	servers := map[string]*pt.Server{}
	for _, task := range tasks {
		srv := pt.New(t, replay(t, string(task.FixPatch))...)
		prov, err := provider.New("openai:"+pt.OpenAIModel, srv.Options(provider.NameOpenAI))
		if err != nil {
			t.Fatal(err)
		}
		servers[task.ID] = srv
		runners[task.ID] = &pipelinerun.Runner{Base: pipeline.Executor{Provider: prov, Sandboxes: engine, Images: engine, DefaultImage: image}}
	}
	out := t.TempDir()
	rep, err := eval.Evaluate(context.Background(), tasks, eval.Options{
		Model: "openai:" + pt.OpenAIModel, Runner: runners, Sandboxes: engine, Images: engine,
		Concurrency: 2, Out: out, Image: image, DefaultImage: image,
		CacheVolume: func(*eval.Task) string { return sandboxtest.CacheVolume },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid) != 0 {
		t.Fatalf("invalid: %+v", rep.Invalid)
	}
	for _, r := range rep.Results {
		if !r.Resolved || r.Outcome != "verified" {
			log, _ := os.ReadFile(filepath.Join(out, "runs", r.Task, "1", eval.FileHiddenLog))
			body, _ := os.ReadFile(filepath.Join(out, "runs", r.Task, "1", "pr.md"))
			t.Errorf("%s: %+v\n%s\n%s", r.Task, r, log, body)
		}
		if n := servers[r.Task].Remaining(); n != 0 {
			t.Errorf("%s: %d scripted turns were not used", r.Task, n)
		}
	}
	s := rep.Summary
	if s.Attempts != 12 || s.Resolved != 12 || s.Wilson95[1] != 1 || s.Wilson95[0] < 0.7575 || s.Wilson95[0] > 0.7585 {
		t.Errorf("summary %+v, want 12 of 12 with [0.758, 1]", s.Group)
	}
	if a := s.VerifiedAgreement; a != (eval.Agreement{TruePos: 12}) {
		t.Errorf("agreement %+v", a)
	}
	for lang, n := range map[string]int{"go": 4, "python": 4, "javascript": 4} {
		if g := s.ByLanguage[lang]; g.Attempts != n || g.Resolved != n {
			t.Errorf("%s: %+v", lang, g)
		}
	}
}
