package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchwright/patchwright/verify/findings"
)

// What dependency setup after the change writes into the tree reaches the
// final checks (issue 24). Go's and pip's downloads land in the cache
// volume, but npm, yarn and pnpm install into the project's node_modules,
// a configured setup may make a virtualenv or a vendor directory, and
// Composer writes vendor/: all of that is in the setup's copy of the
// tree, not in the cache. So after a setup whose commands all passed the
// final checks run on that copy, with every path of the commit moved back
// into it from the committed tree the setup copied: whatever setup did to
// a committed file (a rewritten lock file, a test edited by a build
// script of the change) is undone, and what it added beside the commit
// (node_modules, .venv, vendor/) stays. The copy was made from the final
// tree (the pristine tree and the committed change), never from the
// model's work tree, so nothing the model wrote outside its commit, in
// node_modules or anywhere, is in it; and the commit is made from the
// work tree, so nothing here can enter it.
//
// Why the tree and not an offline reinstall in the checks' container
// (`npm ci --offline` from a filled npm cache): that would need each
// ecosystem's offline command and a lock file, would cost every final
// check an install, and would not cover a configured setup that makes a
// virtualenv; the tree the trusted setup left is what the first setup
// hands the checks too (the pristine tree).

// committedPaths are the files and links of the committed tree, as paths
// of the final tree: the base commit's and the change's, less any path
// under another (a file that replaced a directory: the file is the
// commit's, the paths under it are gone).
func (r *run) committedPaths() ([]string, error) {
	base, err := r.repo.BasePaths()
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(base)+len(r.fin.changes))
	for _, p := range base {
		set[p] = true
	}
	for _, c := range r.fin.changes {
		set[c.Path] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		if !underAnother(set, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

func underAnother(set map[string]bool, p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if set[d] {
			return true
		}
	}
	return false
}

// adoptSetupOutput makes the setup copy out the final tree dir: every
// committed path is moved from dir into out (replacing what setup left
// at that path), then dir is removed and out takes its name. A path the
// committed tree does not hold (a deletion, a change left out of the
// commit) is left as setup made it. Both trees are under r.clone.trees and no
// container writes them any more; every move goes through one os.Root,
// and each parent directory is checked to be a real one, so no link
// either tree holds can send a file elsewhere.
func (r *run) adoptSetupOutput(dir, out string) error {
	paths, err := r.committedPaths()
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(r.clone.trees)
	if err != nil {
		return err
	}
	defer root.Close()
	from, to := filepath.Base(dir), filepath.Base(out)
	for _, p := range paths {
		if err := moveCommitted(root, from, to, p); err != nil {
			return fmt.Errorf("put %s back after dependency setup: %w", p, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(out, dir)
}

// moveCommitted moves from/p to to/p when from/p is a file or link under
// real directories; anything setup left at to/p, or a link or file where
// one of its parent directories should be, is removed first.
func moveCommitted(root *os.Root, from, to, p string) error {
	src, dst := from+"/"+p, to+"/"+p
	if !realDirs(root, from, path.Dir(p)) {
		return nil
	}
	info, err := root.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if err := makeRealDirs(root, to, path.Dir(p)); err != nil {
		return err
	}
	if err := root.RemoveAll(dst); err != nil {
		return err
	}
	return root.Rename(src, dst)
}

// realDirs reports whether every directory of dir (relative to top) is a
// real directory under root, not a link.
func realDirs(root *os.Root, top, dir string) bool {
	p := top
	for _, name := range splitDir(dir) {
		p += "/" + name
		info, err := root.Lstat(p)
		if err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

// makeRealDirs makes every directory of dir under top a real directory,
// replacing a file or link setup left in the way.
func makeRealDirs(root *os.Root, top, dir string) error {
	p := top
	for _, name := range splitDir(dir) {
		p += "/" + name
		info, err := root.Lstat(p)
		if err == nil && info.IsDir() {
			continue
		}
		if err == nil {
			if err := root.Remove(p); err != nil {
				return err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := root.Mkdir(p, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func splitDir(dir string) []string {
	if dir == "." || dir == "" {
		return nil
	}
	return strings.Split(dir, "/")
}

// dependencyDir is a directory a package manager installs a project's
// dependencies into, inside the tree, with the manifests whose download
// command fills it.
type dependencyDir struct {
	name  string
	fills func(manifest string) bool
}

// dependencyDirs are the one list of them, which the first setup
// (outputIgnored) and fetch_dependencies (installIntoWorkTree) both go
// by.
var dependencyDirs = []dependencyDir{
	{"node_modules", func(m string) bool { return path.Base(m) == "package.json" }},
	{".venv", func(m string) bool {
		return slices.Contains(pyProjectFiles, path.Base(m)) || findings.IsRequirements(m)
	}},
	{"vendor", func(m string) bool { return path.Base(m) == "composer.json" }},
}

// isDependencyDir reports whether name is one of dependencyDirs.
func isDependencyDir(name string) bool {
	return slices.ContainsFunc(dependencyDirs, func(d dependencyDir) bool { return d.name == name })
}

// dependencyDirOf is the directory the download command for manifest m
// installs into, by name; "" for none (it fills the cache only).
func dependencyDirOf(m string) string {
	for _, d := range dependencyDirs {
		if d.fills(m) {
			return d.name
		}
	}
	return ""
}

// installIntoWorkTree gives the model's work tree what fetch_dependencies'
// setup installed into the tree (issue 24): each dependency directory
// (dependencyDirs: node_modules, .venv, vendor) of the setup copy out
// that the work tree's .gitignore files exclude, and under which the base
// commit has no path, replaces the work tree's own.
// Nothing else of the copy comes back, and a dependency directory the
// repository does not ignore stays out (it would enter the commit). The
// agent's container is stopped: nothing writes either tree. It returns the
// directories installed.
func (r *run) installIntoWorkTree(out string) ([]string, error) {
	found, err := findDependencyDirs(out)
	if err != nil {
		return nil, err
	}
	base, err := r.repo.BasePaths()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(r.clone.trees)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	from, to := filepath.Base(out), filepath.Base(r.ws.Dir())
	var installed []string
	for _, dir := range found {
		ignored, err := r.repo.Ignores(dir)
		if err != nil {
			return installed, err
		}
		if !ignored || slices.ContainsFunc(base, func(p string) bool { return strings.HasPrefix(p, dir+"/") }) {
			continue
		}
		if err := makeRealDirs(root, to, path.Dir(dir)); err != nil {
			return installed, err
		}
		if err := root.RemoveAll(to + "/" + dir); err != nil {
			return installed, err
		}
		if err := root.Rename(from+"/"+dir, to+"/"+dir); err != nil {
			return installed, fmt.Errorf("install %s into the work tree: %w", dir, err)
		}
		installed = append(installed, dir)
	}
	return installed, nil
}

// findDependencyDirs are the dependency directories of the tree at top,
// as slash paths, outermost only (node_modules inside node_modules is
// the outer one's). Links are not followed.
func findDependencyDirs(top string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == top {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if isDependencyDir(d.Name()) {
			rel, _ := filepath.Rel(top, p)
			out = append(out, filepath.ToSlash(rel))
			return filepath.SkipDir
		}
		return nil
	})
	return out, err
}

// virtualenvs are the Python virtualenvs the trusted setup made in the
// check tree dir (issue 24), by the directory each is in: every
// outermost .venv holding bin/python under which neither the base commit
// nor the change has a path. The tree's paths outside the commit came from
// the first setup or from dependency setup (adoptSetupOutput), never from
// the model, so the checks that run with one (verify.Runner.Virtualenvs)
// import only what trusted setup installed.
func (r *run) virtualenvs(dir string) (map[string]string, error) {
	found, err := findDependencyDirs(dir)
	if err != nil {
		return nil, err
	}
	var committed []string
	out := map[string]string{}
	for _, d := range found {
		if path.Base(d) != ".venv" || !hasPython(dir, d) {
			continue
		}
		if committed == nil {
			if committed, err = r.committedPaths(); err != nil {
				return nil, err
			}
		}
		if slices.ContainsFunc(committed, func(p string) bool { return p == d || strings.HasPrefix(p, d+"/") }) {
			continue
		}
		out[path.Dir(d)] = d
	}
	return out, nil
}

// hasPython reports whether the virtualenv env of the tree top has a
// bin/python, bin a real directory (a link could point anywhere).
func hasPython(top, env string) bool {
	root, err := os.OpenRoot(top)
	if err != nil {
		return false
	}
	defer root.Close()
	if !realDirs(root, ".", env+"/bin") {
		return false
	}
	_, err = root.Lstat(env + "/bin/python")
	return err == nil
}
