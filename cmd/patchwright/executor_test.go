package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/eval"
	"github.com/patchwright/patchwright/eval/pipelinerun"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/sandbox"
)

// nopEngine stands in for Docker: the executors are compared, not run.
type nopEngine struct{}

func (nopEngine) Create(context.Context, sandbox.Spec) (sandbox.Sandbox, error) { return nil, nil }
func (nopEngine) ImageExists(context.Context, string) (bool, error)             { return true, nil }
func (nopEngine) ResolveImage(_ context.Context, ref string) (sandbox.Image, error) {
	return sandbox.Image{Ref: ref, Use: ref}, nil
}

// commandExecutors builds the executor of serve's embedded worker, of
// worker, of run and of one eval run, each through its command's own
// path, from the process environment; plus eval's options, whose checks
// must see the same sandboxes.
func commandExecutors(t *testing.T) (map[string]*pipeline.Executor, eval.Options) {
	t.Helper()
	t.Setenv("PATCHWRIGHT_APP_ID", "1")
	t.Setenv("PATCHWRIGHT_PRIVATE_KEY", "k")
	t.Setenv("PATCHWRIGHT_WEBHOOK_SECRET", "s")
	t.Setenv("PATCHWRIGHT_REDIS_URL", "redis://127.0.0.1:1/0")
	t.Setenv("PATCHWRIGHT_MODEL", "openai:gpt-4.1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	execs := map[string]*pipeline.Executor{}
	for _, command := range []string{"serve", "worker"} {
		cfg, err := parseConfig(command, nil, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		execs[command] = workerExecutor(workerDeps{cfg: cfg}, nopEngine{}, fakeProvider{})
	}

	plan, err := prepareRun(runOptions{repo: userRepo(t), title: "Fix Add", model: "openai:gpt-4.1", out: t.TempDir()})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	execs["run"] = plan.executor(nopEngine{})

	ep, err := prepareEval(evalOptions{tasks: starterTask(t), model: "openai:gpt-4.1", out: t.TempDir(), runs: 1, concurrency: 1})
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	opts := ep.options(nopEngine{})
	execs["eval"] = opts.Runner.(*pipelinerun.Runner).Executor(eval.RunRequest{Task: ep.tasks[0], Run: 1, CacheVolume: "c"})
	return execs, opts
}

// starterTask is a copy of one starter task, shipped as src/.
func starterTask(t *testing.T) string {
	t.Helper()
	src, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "tasks", "go-lru-get-refreshes"))
	tasks := filepath.Join(t.TempDir(), "tasks")
	if err := os.CopyFS(filepath.Join(tasks, "go-lru-get-refreshes"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(tasks, "go-lru-get-refreshes", "repo"))
	return tasks
}

// TestExecutorsAgree: the four commands run their sandboxes alike, so
// eval measures what users run (issue 21).
func TestExecutorsAgree(t *testing.T) {
	t.Setenv("PATCHWRIGHT_SANDBOX_IMAGE", "operator/image:1")
	t.Setenv("PATCHWRIGHT_SANDBOX_MEMORY", "3g")
	t.Setenv("PATCHWRIGHT_SANDBOX_CPUS", "1.5")
	t.Setenv("PATCHWRIGHT_SANDBOX_PIDS", "300")
	t.Setenv("PATCHWRIGHT_SANDBOX_RUNTIME", "runsc")
	t.Setenv("PATCHWRIGHT_MAX_CHANGE_BYTES", "64m")
	execs, opts := commandExecutors(t)
	wantLimits := sandbox.Limits{MemoryBytes: 3 << 30, CPUs: 1.5, PIDs: 300}
	root := os.Geteuid() == 0
	for command, e := range execs {
		if e.SandboxLimits != wantLimits || e.SandboxRuntime != "runsc" || e.DefaultImage != "operator/image:1" {
			t.Errorf("%s: limits %+v, runtime %q, default image %q; want %+v, runsc, operator/image:1",
				command, e.SandboxLimits, e.SandboxRuntime, e.DefaultImage, wantLimits)
		}
		if e.MaxChangeBytes != 64<<20 {
			t.Errorf("%s: change bound %d, want 64 MiB", command, e.MaxChangeBytes)
		}
		if (e.BoundWorkspace != nil) != root {
			t.Errorf("%s: bounded work tree %v as uid %d", command, e.BoundWorkspace != nil, os.Geteuid())
		}
		if e.Sandboxes == nil || e.Images == nil || e.Provider == nil || e.CacheVolume == nil {
			t.Errorf("%s: executor lacks its engine, model or caches: %+v", command, e)
		}
	}
	if opts.DefaultImage != "operator/image:1" || opts.SandboxLimits != wantLimits || opts.SandboxRuntime != "runsc" {
		t.Errorf("eval's own checks: default image %q, limits %+v, runtime %q", opts.DefaultImage, opts.SandboxLimits, opts.SandboxRuntime)
	}
}

// TestExecutorsAgreeOnDefaults: with no sandbox setting, every command
// falls back to the same default image and limits.
func TestExecutorsAgreeOnDefaults(t *testing.T) {
	for _, k := range []string{"IMAGE", "MEMORY", "CPUS", "PIDS", "RUNTIME"} {
		t.Setenv("PATCHWRIGHT_SANDBOX_"+k, "")
		os.Unsetenv("PATCHWRIGHT_SANDBOX_" + k)
	}
	execs, opts := commandExecutors(t)
	for command, e := range execs {
		if e.DefaultImage != pipeline.DefaultImage || e.SandboxLimits != (sandbox.Limits{}) || e.SandboxRuntime != "" {
			t.Errorf("%s: default image %q, limits %+v, runtime %q", command, e.DefaultImage, e.SandboxLimits, e.SandboxRuntime)
		}
	}
	if opts.DefaultImage != pipeline.DefaultImage {
		t.Errorf("eval's default image %q", opts.DefaultImage)
	}
}

// TestBadSandboxSettingStopsEveryCommand: run and eval refuse a malformed
// setting as serve and worker do, with the variable's name.
func TestBadSandboxSettingStopsEveryCommand(t *testing.T) {
	t.Setenv("PATCHWRIGHT_SANDBOX_MEMORY", "lots")
	t.Setenv("OPENAI_API_KEY", "test-key")
	if _, err := prepareRun(runOptions{repo: userRepo(t), title: "x", model: "openai:gpt-4.1", out: t.TempDir()}); err == nil {
		t.Error("run accepted PATCHWRIGHT_SANDBOX_MEMORY=lots")
	}
	if _, err := prepareEval(evalOptions{tasks: starterTask(t), model: "openai:gpt-4.1", out: t.TempDir(), runs: 1, concurrency: 1}); err == nil {
		t.Error("eval accepted PATCHWRIGHT_SANDBOX_MEMORY=lots")
	}
	if _, err := parseConfig("worker", []string{"--app-id", "1", "--private-key", "k", "--redis-url", "redis://x", "--model", "openai:gpt-4.1"}, io.Discard); err == nil {
		t.Error("worker accepted PATCHWRIGHT_SANDBOX_MEMORY=lots")
	}
}

// TestNetworkSettings: the egress allowlist, open networks and the
// setup-secrets file reach every command's executor; each bad value is
// refused with its variable's name.
func TestNetworkSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secrets.yml")
	if err := os.WriteFile(file, []byte("acme/widgets:\n  NPM_TOKEN: "+strings.Repeat("x", 20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATCHWRIGHT_EGRESS_ALLOW", "registry.corp.example:8443, *.corp.example")
	t.Setenv("PATCHWRIGHT_ALLOW_OPEN_NETWORK", "true")
	t.Setenv("PATCHWRIGHT_GOPROXY_ANY_ORIGIN", "true")
	t.Setenv("PATCHWRIGHT_SETUP_SECRETS_FILE", file)
	t.Setenv("PATCHWRIGHT_EGRESS_ALLOW_CIDRS", "10.20.0.0/16 192.168.7.9")
	if s, err := sandboxFromEnv(); err != nil || fmt.Sprint(s.engineOptions(false).EgressOpen) != "[10.20.0.0/16 192.168.7.9/32]" {
		t.Errorf("PATCHWRIGHT_EGRESS_ALLOW_CIDRS reached the engine as %v (%v)", s.engineOptions(false).EgressOpen, err)
	}
	execs, _ := commandExecutors(t)
	for command, e := range execs {
		if strings.Join(e.EgressAllow, " ") != "registry.corp.example:8443 *.corp.example" || !e.AllowOpenNetwork || !e.GoProxyAnyOrigin ||
			e.SetupSecrets.For("https://github.com/acme/widgets")["NPM_TOKEN"] == "" {
			t.Errorf("%s: egress %v, open %v, secrets of %d repositories", command, e.EgressAllow, e.AllowOpenNetwork, len(e.SetupSecrets))
		}
	}
	for env, bad := range map[string]string{
		"PATCHWRIGHT_EGRESS_ALLOW_CIDRS": "10.0.0.0/8,127.0.0.0/8",
		"PATCHWRIGHT_EGRESS_ALLOW":       "http://proxy/",
		"PATCHWRIGHT_ALLOW_OPEN_NETWORK": "perhaps",
		"PATCHWRIGHT_GOPROXY_ANY_ORIGIN": "any",
		"PATCHWRIGHT_SETUP_SECRETS_FILE": filepath.Join(t.TempDir(), "missing.yml"),
	} {
		raw := rawSandbox{}
		switch env {
		case "PATCHWRIGHT_EGRESS_ALLOW":
			raw.egressAllow = bad
		case "PATCHWRIGHT_EGRESS_ALLOW_CIDRS":
			raw.egressCIDRs = bad
		case "PATCHWRIGHT_ALLOW_OPEN_NETWORK":
			raw.openNetwork = bad
		case "PATCHWRIGHT_GOPROXY_ANY_ORIGIN":
			raw.goProxyAnyOrigin = bad
		default:
			raw.setupSecrets = bad
		}
		if _, err := raw.parse(); err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("%s=%s: %v, want an error naming it", env, bad, err)
		}
	}
}
