package gitrepo

import (
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// maxCovered bounds the paths one link is followed into. A link to a
// larger directory has CoversAll set instead.
const maxCovered = 100000

// cover fills each added or modified change's Covers: the tracked paths
// under its path (a file or link where the base had a directory), and for
// a link that resolves to a directory inside the tree, the paths under the
// link's name that a checkout would show.
func (r *Repo) cover(root *os.Root, changes []Change, tracked []*index.Entry) {
	for i := range changes {
		c := &changes[i]
		if c.Kind == Deleted {
			continue
		}
		prefix := c.Path + "/"
		for _, e := range tracked {
			if strings.HasPrefix(e.Name, prefix) {
				c.Covers = append(c.Covers, e.Name)
			}
		}
		if c.Symlink {
			linked, all := linkedPaths(root, c.Path)
			c.Covers, c.CoversAll = append(c.Covers, linked...), all
		}
	}
}

// linkedPaths lists the files a link at p makes visible under p, when it
// resolves to a directory of the tree (os.Root refuses a target outside
// it, and such a target holds nothing of the repository). all reports a
// directory too large to list, which then covers every path under p.
func linkedPaths(root *os.Root, p string) (paths []string, all bool) {
	info, err := root.Stat(p)
	if err != nil || !info.IsDir() {
		return nil, false
	}
	sub, err := root.OpenRoot(p)
	if err != nil {
		return nil, false
	}
	defer sub.Close()
	fs.WalkDir(sub.FS(), ".", func(q string, d fs.DirEntry, err error) error {
		if err != nil || q == "." || d.IsDir() {
			return nil
		}
		if len(paths) == maxCovered {
			all = true
			return fs.SkipAll
		}
		paths = append(paths, path.Join(p, q))
		return nil
	})
	return paths, all
}
