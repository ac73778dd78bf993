package sandbox

import "path"

// WhyExcluded is the reason of a *NotVisibleError for a path under an
// `exclude:` pattern (the repository's or the operator's policy).
const WhyExcluded = "is excluded from what the model may read (exclude: in .github/agent.yml or the operator's policy)"

// Excluder answers whether a path is excluded from the model's view. rel
// is slash-separated and relative to the repository root; isDir says
// whether it names a directory. agent/ignore.List is the implementation;
// the sandbox package takes it as an interface because it imports only
// the standard library.
type Excluder interface {
	Excluded(rel string, isDir bool) bool
}

// Exclude makes every path ex matches invisible through Visible,
// WalkVisible and the directory handles (and so through every tool,
// the repository map and the instruction files), whether or not it
// exists. Call it once, before the workspace is shared; nil removes
// the rule. Views made by OpenDir afterwards inherit it.
func (w *Workspace) Exclude(ex Excluder) { w.exclude = ex }

// excluded reports whether rel (relative to w) or a directory on its way
// is excluded. Each directory on the way is asked as a directory, so an
// excluded directory hides everything under it.
func (w *Workspace) excluded(rel string, isDir bool) bool {
	if w.exclude == nil || rel == "." || rel == "" {
		return false
	}
	full := path.Join(w.base, rel)
	for i := 0; i < len(full); i++ {
		if full[i] == '/' && w.exclude.Excluded(full[:i], true) {
			return true
		}
	}
	return w.exclude.Excluded(full, isDir)
}

// excludedErr is Visible's answer for an excluded path.
func (w *Workspace) excludedErr(rel string) error {
	return &NotVisibleError{Path: rel, Why: WhyExcluded}
}

// isDir reports whether rel is a directory, not following a final
// symbolic link; false when it cannot be told. Only a directory-only
// pattern ("build/") needs it.
func (w *Workspace) isDir(rel string) bool {
	if w.exclude == nil {
		return false
	}
	info, err := w.root.Lstat(rel)
	return err == nil && info.IsDir()
}
