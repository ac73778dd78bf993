package tools

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeFetcher returns a fixed Fetch and counts calls.
type fakeFetcher struct {
	fetch Fetch
	err   error
	calls int
}

func (f *fakeFetcher) FetchDependencies(context.Context) (Fetch, error) {
	f.calls++
	return f.fetch, f.err
}

func withFetcher(f DependencyFetcher) func(*Options) {
	return func(o *Options) { o.Dependencies = f }
}

func TestFetchDependenciesOnlyWithAFetcher(t *testing.T) {
	names := func(s *Set) []string {
		var out []string
		for _, tl := range s.Tools() {
			out = append(out, tl.Name())
		}
		return out
	}
	if got := names(newEnv(t, nil).set); slices.Contains(got, "fetch_dependencies") {
		t.Errorf("tools without a fetcher: %v", got)
	}
	got := names(newEnv(t, nil, withFetcher(&fakeFetcher{})).set)
	want := []string{"list_files", "read_file", "search", "edit", "write_file", "delete_file", "run", "verify", "fetch_dependencies", "finish"}
	if !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
}

func TestFetchDependencies(t *testing.T) {
	for name, tc := range map[string]struct {
		fetch    Fetch
		code     Code
		contains []string
		absent   []string
	}{
		"fetched": {
			fetch: Fetch{
				Manifests: []string{"go.mod", "go.sum"},
				Commands:  []CommandRecord{{Command: "go mod download", Output: "quiet"}},
				Fetched:   []string{"Go module example.com/strutil v1.0.0 (new)"},
				Sources:   []string{"GOPROXY=http://proxy.test"},
			},
			contains: []string{"$ go mod download\nexit code 0", "manifests: go.mod, go.sum", "dependency setup passed",
				"fetched: Go module example.com/strutil v1.0.0 (new)", "from: GOPROXY=http://proxy.test"},
			// A passing command's output is noise to the model.
			absent: []string{"quiet"},
		},
		"installed": {
			fetch: Fetch{
				Manifests: []string{"package.json"},
				Commands:  []CommandRecord{{Command: "npm ci"}},
				Installed: []string{"node_modules", "web/node_modules"},
			},
			contains: []string{"installed into the work tree: node_modules", "installed into the work tree: web/node_modules"},
		},
		"failed": {
			fetch: Fetch{
				Manifests: []string{"go.mod"},
				Commands:  []CommandRecord{{Command: "go mod download", ExitCode: 1, Output: "example.com/nope: not found"}},
			},
			contains: []string{"exit code 1", "example.com/nope: not found", "dependency setup failed"},
			absent:   []string{"dependency setup passed"},
		},
		"timed out": {
			fetch:    Fetch{Manifests: []string{"Cargo.toml"}, Commands: []CommandRecord{{Command: "cargo fetch", ExitCode: -1, TimedOut: true}}},
			contains: []string{"timed out", "dependency setup failed"},
		},
		"nothing changed": {
			code:     NotFound,
			contains: []string{"error: not_found", "nothing to fetch"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeFetcher{fetch: tc.fetch}
			env := newEnv(t, nil, withFetcher(f))
			res := env.call(t, "fetch_dependencies", map[string]any{})
			if res.Code != tc.code {
				t.Errorf("code %q, want %q: %s", res.Code, tc.code, res.Text)
			}
			for _, s := range tc.contains {
				if !strings.Contains(res.Text, s) {
					t.Errorf("result lacks %q:\n%s", s, res.Text)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(res.Text, s) {
					t.Errorf("result holds %q:\n%s", s, res.Text)
				}
			}
			if len(res.Commands) != len(tc.fetch.Commands) {
				t.Errorf("%d commands recorded, want %d", len(res.Commands), len(tc.fetch.Commands))
			}
			if f.calls != 1 {
				t.Errorf("fetcher called %d times", f.calls)
			}
		})
	}
}

func TestFetchDependenciesBadInput(t *testing.T) {
	f := &fakeFetcher{fetch: Fetch{Manifests: []string{"go.mod"}}}
	env := newEnv(t, nil, withFetcher(f))
	res := env.call(t, "fetch_dependencies", map[string]any{"module": "example.com/x"})
	if res.Code != InvalidArguments || f.calls != 0 {
		t.Errorf("unknown argument: code %q after %d calls: %s", res.Code, f.calls, res.Text)
	}
	// An infrastructure failure ends the run: a Go error, not a result.
	f.err = errors.New("engine gone")
	if _, err := env.callErr(t, "fetch_dependencies", map[string]any{}); err == nil || !strings.Contains(err.Error(), "engine gone") {
		t.Errorf("infrastructure failure: %v", err)
	}
}

func TestFetchDependenciesWithholdsSecrets(t *testing.T) {
	key := "AKIA" + "Q7XR2MBN5TLC4PWE"
	f := &fakeFetcher{fetch: Fetch{Manifests: []string{"go.mod"}, Commands: []CommandRecord{{Command: "go mod download", ExitCode: 1, Output: "token " + key}}}}
	env := newEnv(t, nil, withFetcher(f))
	res := env.call(t, "fetch_dependencies", map[string]any{})
	if res.Code != SecretDetected || strings.Contains(res.Text, key) || strings.Contains(res.Commands[0].Output, key) {
		t.Errorf("a secret in setup output reached the model: %q %+v", res.Code, res)
	}
}

// TestFetchDependenciesWithholdsARegistryOfNpmrc: a source that is a value
// of the tree's .npmrc (a secret-bearing file) is withheld alone; the rest
// of the result reaches the model.
func TestFetchDependenciesWithholdsARegistryOfNpmrc(t *testing.T) {
	f := &fakeFetcher{fetch: Fetch{
		Manifests: []string{"package.json"},
		Commands:  []CommandRecord{{Command: "npm ci"}},
		Sources:   []string{"npm registry http://registry.internal.test:4873/"},
		Installed: []string{"node_modules"},
	}}
	env := newEnv(t, map[string]string{".npmrc": "registry=http://registry.internal.test:4873/\n"}, withFetcher(f))
	res := env.call(t, "fetch_dependencies", map[string]any{})
	if res.Code != "" || strings.Contains(res.Text, "registry.internal.test") ||
		!strings.Contains(res.Text, "from: [withheld: it is a value of a secret file") || !strings.Contains(res.Text, "installed into the work tree: node_modules") {
		t.Errorf("code %q, result:\n%s", res.Code, res.Text)
	}
}
