package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
)

// Setup-only secrets stay in setup (issue 40). The first setup on the
// default branch's tree is the one phase that gets them, and it can
// leave a value behind where a later phase reads it:
//
//   - in the work tree (a token in an ignored .npmrc, or in a file nobody
//     ignores): the pristine tree keeps every file setup wrote, and every
//     later tree is made from it, so the agent could read it and
//     fetch_dependencies would run the model's Makefile beside it with the
//     allowlisted network;
//   - in the build cache volume (HOME/.cache, where CARGO_HOME is, so
//     `cargo login` writes its credentials there): every later sandbox
//     of the job, and of later jobs, mounts it.
//
// The rest of HOME and /tmp are the setup container's own tmpfs and go
// with it. So, before that container goes, both places are searched for
// every value, in every encoding the scanner knows, and each file that
// holds one is removed and named in the ledger and the report. The run
// goes on: the checks then run without those files, as the report says.
// A file that cannot be removed ends the run with a configuration error
// that says where to write credentials instead.

// credentialsAdvice tells the operator where a setup-only secret may be
// written.
const credentialsAdvice = "write setup-only secrets outside the work tree and the build cache, for example to $HOME/.npmrc (see docs/agent-yml.md)"

// removeSetupSecretFiles searches what the first setup wrote to the work
// tree and the build cache for the setup-only secrets' values and
// removes each file that holds one, through the setup container, whose
// user wrote them, and returns those files for the report. It runs while
// that container is still up and before the pristine tree is copied, so
// no later tree has them. Nothing to do when setup got no secrets.
func (r *run) removeSetupSecretFiles(ctx context.Context) ([]report.SecretFile, error) {
	if len(r.first.setupSecrets) == 0 || r.box.sb == nil {
		return nil, nil
	}
	tree, files, err := r.treeFilesWithSecrets(ctx)
	if err != nil {
		return files, err
	}
	needles := r.scanner.ValueNeedles()
	cache := r.sharedCache() != "" && len(needles) > 0
	if len(tree) == 0 && !cache {
		return files, nil
	}
	res, err := r.box.sb.Exec(ctx, sandbox.Command{Script: scrubScript(tree, needles, cache), Timeout: DefaultSetupTimeout})
	if err != nil {
		return files, fmt.Errorf("remove the files setup wrote a setup-only secret into: %w", err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		// grep names the files it could not read: names setup chose.
		why, err := withholdText(r.scanner, strings.TrimSpace(string(res.Stderr.Tail)))
		if err != nil {
			return files, err
		}
		return files, configError{fmt.Errorf("setup left a setup-only secret in a file that could not be removed (%s, exit %d); %s",
			why, res.ExitCode, credentialsAdvice)}
	}
	if err := r.checkRemoved(tree); err != nil {
		return files, err
	}
	for _, p := range strings.Split(strings.TrimSpace(string(res.Stdout.Head)), "\n") {
		if p != "" {
			files = append(files, report.SecretFile{Path: r.shownPath(p), Cache: true})
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	_, err = r.ledger.Append(&ledger.SetupSecretFiles{Files: files})
	return files, err
}

// treeFilesWithSecrets are the work-tree files setup wrote or changed
// (gitrepo's Written: ignored ones too) whose bytes or name hold a
// setup-only secret's value, and the same files named for the report
// (as far as the search got when it fails).
func (r *run) treeFilesWithSecrets(ctx context.Context) ([]string, []report.SecretFile, error) {
	written, err := r.repo.Written()
	if err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(r.ws.Dir())
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	var out []string
	var files []report.SecretFile
	for _, p := range written {
		names, err := r.secretsIn(ctx, root, p)
		if err != nil {
			return nil, files, fmt.Errorf("search %s for setup-only secrets: %w", r.shownPath(p), err)
		}
		if len(names) > 0 {
			out = append(out, p)
			files = append(files, report.SecretFile{Path: r.shownPath(p), Names: names})
		}
	}
	return out, files, nil
}

// secretsIn names the setup-only secrets whose values are in p's name or
// bytes, each once.
func (r *run) secretsIn(ctx context.Context, root *os.Root, p string) ([]string, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	found, err := r.scanner.ValuesIn(ctx, p, f)
	if err != nil {
		return nil, err
	}
	inName, err := r.scanner.ValuesIn(ctx, p, strings.NewReader(p))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range append(found, inName...) {
		name := strings.TrimPrefix(f.Description, "the setup-only secret ")
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// scrubScript removes the work-tree files tree (relative to the
// workspace) and, with cache, every file of HOME/.cache holding one of
// needles (secrets.Scanner.ValueNeedles: the worker cannot read the
// volume, so grep -F searches it inside the container), printing each
// cache file it removed, relative to the cache. Go's module cache makes
// its directories read-only, so a file's directory is made writable
// first. It fails when a needle is still in the cache afterwards. The
// script holds the needles: it is never recorded.
func scrubScript(tree, needles []string, cache bool) string {
	var b strings.Builder
	b.WriteString("set -u\n")
	for _, p := range tree {
		fmt.Fprintf(&b, "rm -f -- %s || exit 1\n", shellQuote(sandbox.WorkspaceDir+"/"+p))
	}
	if !cache {
		return b.String()
	}
	b.WriteString(`c="$HOME/.cache"
[ -d "$c" ] || exit 0
command -v grep >/dev/null 2>&1 || { echo "grep is not in the image, so the build cache cannot be searched" >&2; exit 1; }
n=$(mktemp) || exit 1
printf '%s\n'`)
	for _, n := range needles {
		b.WriteString(" " + shellQuote(n))
	}
	b.WriteString(` > "$n"
grep -rlZF -f "$n" -- "$c" | xargs -0 -r sh -c 'for f; do chmod u+w "${f%/*}" 2>/dev/null; rm -f -- "$f"; printf "%s\n" "${f#"$HOME/.cache/"}"; done' sh
if grep -rqF -f "$n" -- "$c"; then echo "a file of the build cache that holds a setup-only secret could not be removed" >&2; exit 1; fi
rm -f -- "$n"
`)
	return b.String()
}

// checkRemoved makes sure, on the host, that no file of tree is left.
func (r *run) checkRemoved(tree []string) error {
	for _, p := range tree {
		_, err := os.Lstat(filepath.Join(r.ws.Dir(), filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return configError{fmt.Errorf("setup wrote a setup-only secret into %s, which could not be removed; %s", r.shownPath(p), credentialsAdvice)}
	}
	return nil
}
