package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/secrets"
)

// DependencyFetcher runs trusted dependency setup for the work tree as it
// is now: the application's commands (the default branch's `setup:`, or
// each changed project's own download command), never the model's, with
// the setup network, on a copy of the tree, and then gives the model's
// sandbox the refreshed cache. The pipeline implements it.
type DependencyFetcher interface {
	// FetchDependencies returns what ran and what it fetched. The error
	// is for infrastructure failures; a command that failed is a Fetch
	// with that command's exit code.
	FetchDependencies(ctx context.Context) (Fetch, error)
}

// Fetch is what one dependency setup did.
type Fetch struct {
	// Manifests are the changed manifests and lockfiles; empty when the
	// tree changes none (nothing then ran).
	Manifests []string
	// Commands ran in order; the first that failed ended the setup.
	Commands []CommandRecord
	// Fetched names each dependency the change adds or re-versions, one
	// line each ("Go module example.com/x v1.2.0 (new)").
	Fetched []string
	// Sources say where from ("GOPROXY=https://proxy.golang.org").
	Sources []string
	// Installed are the dependency directories of the tree (node_modules,
	// .venv) that setup filled and that now replace the work tree's own.
	Installed []string
	// NotFetched names each dependency setup held back, and why.
	NotFetched []string
}

// FetchDependenciesParams are the parameters of fetch_dependencies: none.
type FetchDependenciesParams struct{}

func (s *Set) fetchDependencies(ctx context.Context, _ FetchDependenciesParams) (Result, error) {
	f, err := s.deps.FetchDependencies(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("fetch_dependencies: %w", err)
	}
	if len(f.Manifests) == 0 {
		return fail(NotFound, "no dependency manifest or lock file differs from the base commit, so there is nothing to fetch",
			"add the dependency to the manifest (go.mod and go.sum, package.json and its lock file, …) first, then call fetch_dependencies"), nil
	}
	var b strings.Builder
	failed := false
	for _, c := range f.Commands {
		fmt.Fprintf(&b, "$ %s\nexit code %d", c.Command, c.ExitCode)
		if c.TimedOut {
			b.WriteString(", timed out")
		}
		b.WriteByte('\n')
		if c.ExitCode != 0 || c.TimedOut {
			failed = true
			b.WriteString(c.Output)
			if !strings.HasSuffix(c.Output, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	fmt.Fprintf(&b, "manifests: %s\n", strings.Join(f.Manifests, ", "))
	if failed {
		b.WriteString("dependency setup failed: fix the manifest (a name or version that does not exist, a lock file that does not match), then call fetch_dependencies again\n")
	} else {
		b.WriteString("dependency setup passed; the sandbox now has the fetched dependencies in its cache (files you wrote outside the repository are gone)\n")
	}
	for _, d := range f.Fetched {
		fmt.Fprintf(&b, "fetched: %s\n", d)
	}
	for _, n := range f.NotFetched {
		fmt.Fprintf(&b, "not fetched: %s\n", n)
	}
	for _, src := range f.Sources {
		// A registry that the tree's .npmrc names is a value of a secret
		// file (it may hold a token): said, it would withhold the whole
		// result from the model.
		hits, err := s.scan(ctx, src)
		if err != nil {
			return Result{}, err
		}
		if len(hits) > 0 {
			src = secrets.Withheld("it is a value of a secret file of the work tree, such as .npmrc")
		}
		fmt.Fprintf(&b, "from: %s\n", src)
	}
	for _, dir := range f.Installed {
		fmt.Fprintf(&b, "installed into the work tree: %s (as setup left it; it replaces yours)\n", dir)
	}
	return Result{Text: b.String(), Commands: f.Commands}, nil
}
