package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/registry"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/registrytest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// TestPulledImageWholeRun: a repository whose agent.yml names an image
// the engine lacks, on a registry the operator allows (with
// credentials), runs in it from setup through the final checks: the
// image, the public golang shape (root-owned, no user 1000), is pulled
// once, every container of the run uses its digest, and the ledger and
// the body say what was pulled.
func TestPulledImageWholeRun(t *testing.T) {
	sandboxtest.EndToEnd(t)
	public := sandboxtest.PublicImage(t)
	reg := registrytest.Start(t, "robot", "pull-s3cret")
	repoName := "patchwright-test/pulled-run"
	reg.RemoveImages(t, repoName)
	start := time.Now()
	digest := reg.Push(t, public, repoName, "v1", t.Name())
	t.Logf("pushed %s in %s", public, time.Since(start).Round(time.Second))
	ref := reg.Host + "/" + repoName + ":v1"

	repo := ownRepo(t, "go")
	if err := os.MkdirAll(filepath.Join(repo, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".github", "agent.yml"), []byte("image: "+ref+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", ".github/agent.yml")
	gitIn(t, repo, "commit", "-q", "-m", "Run in the pulled image")

	engine := sandboxtest.NewDocker(t, docker.Options{Pull: docker.PullOptions{
		Registries: []string{reg.Host},
		Auth:       map[string]registry.AuthConfig{reg.Host: {Username: "robot", Password: "pull-s3cret"}},
	}})
	created := &recordingRunner{Runner: engine}
	res, out, _ := scenario{
		repo:        repo,
		cacheVolume: sandboxtest.CacheVolumeFor(public),
		issue:       agent.Issue{Title: "Count counts empty words", Body: "Count(\"\") is 1."},
		wire:        provider.NameAnthropic,
		turns:       patchTurns(t, "go", "fix"),
		tune: func(e *Executor) {
			e.Image = "" // the repository's image: field
			e.Sandboxes = created
			e.Images = engine
		},
	}.run(t)
	body := readBody(t, out)
	if res.Outcome != verify.Verified {
		t.Fatalf("outcome %s (%s), want verified\n%s", res.Outcome, res.Reason, body)
	}
	use := reg.Host + "/" + repoName + "@" + digest
	images := created.list()
	if len(images) < 3 {
		t.Errorf("only %d sandboxes were created: %q", len(images), images)
	}
	for _, img := range images {
		if img != use {
			t.Errorf("a sandbox was created from %s, want the resolved %s", img, use)
		}
	}
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var resolved []ledger.ImageResolved
	for _, rec := range log.Records {
		if rec.Type == ledger.TypeImageResolved {
			var ev ledger.ImageResolved
			if err := rec.Decode(&ev); err != nil {
				t.Fatal(err)
			}
			resolved = append(resolved, ev)
		}
	}
	if len(resolved) != 1 || !resolved[0].Pulled || resolved[0].Ref != ref || resolved[0].Use != use || resolved[0].Digest != digest {
		t.Errorf("image_resolved events %+v; want one, pulled, %s at %s", resolved, ref, digest)
	}
	if want := "Images pulled for this run: sandbox `" + ref + "` at `" + digest + "`."; !strings.Contains(body, want) {
		t.Errorf("pr.md lacks %q:\n%s", want, body)
	}
	for name, text := range outputs(t, out, "") {
		if strings.Contains(text, "pull-s3cret") {
			t.Errorf("%s holds the registry password", name)
		}
	}
}

// recordingRunner records the image of each sandbox it creates.
type recordingRunner struct {
	sandbox.Runner
	mu     sync.Mutex
	images []string
}

func (r *recordingRunner) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	r.mu.Lock()
	r.images = append(r.images, spec.Image)
	r.mu.Unlock()
	return r.Runner.Create(ctx, spec)
}

func (r *recordingRunner) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.images...)
}
