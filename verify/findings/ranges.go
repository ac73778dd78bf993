package findings

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// AdvisoryCheck is one dependency to look up in the advisory database:
// the query asked, and how its version was chosen when the manifest
// gives a range rather than a version.
type AdvisoryCheck struct {
	Dependency
	Query AdvisoryQuery
	// IsRange: the manifest gives a range (`^1.2.0`, `~=2.1`, `>=1,<2`)
	// or no version, as Range writes it, rather than one version.
	IsRange bool
	Range   string
	// Locked: Query.Version is the version the lockfile beside the
	// manifest holds; otherwise it is the range's lower bound, or ""
	// (every version) when the range has none.
	Locked bool
}

// AdvisoryChecks lists the advisory queries for what files add or
// re-version (ChangedDependencies). A range is resolved to the one
// version a lockfile in the manifest's directory holds for the name,
// else to the range's lower bound: the database answers for versions,
// and a range sent as written matches nothing or everything.
func AdvisoryChecks(files []File) []AdvisoryCheck {
	var out []AdvisoryCheck
	for _, d := range ChangedDependencies(files) {
		c := AdvisoryCheck{Dependency: d}
		eco := ecosystems[d.What]
		if isRange(eco, d.Version) {
			c.IsRange, c.Range = true, d.Version
			if v, ok := lockedVersion(files, d); ok {
				d.Version, c.Locked = v, true
			} else {
				d.Version = lowerBound(eco, d.Version)
			}
		}
		q, ok := QueryOf(d)
		if !ok {
			continue
		}
		c.Query = q
		out = append(out, c)
	}
	return out
}

// Finding is the finding for an advisory the database returned for c:
// AdvisoryFinding's, saying which version was looked up when the
// manifest gave a range.
func (c AdvisoryCheck) Finding(a KnownAdvisory) Finding {
	f := AdvisoryFinding(c.Dependency, a)
	if !c.IsRange {
		return f
	}
	given := "a range, `" + c.Range + "`"
	if strings.TrimSpace(c.Range) == "" {
		given = "no version"
	}
	switch {
	case c.Locked:
		f.Detail += fmt.Sprintf(" (the manifest gives %s; the version looked up is %s, the one its lockfile holds)", given, c.Query.Version)
	case c.Query.Version != "":
		f.Detail += fmt.Sprintf(" (the manifest gives %s and no lockfile beside it holds one version; the version looked up is %s, its lower bound)", given, c.Query.Version)
	default:
		f.Detail += fmt.Sprintf(" (the manifest gives %s, with no lower bound, and no lockfile beside it holds one version; every version was looked up)", given)
	}
	return f
}

// exactVersion is one version, as npm, Composer, pip (its "==" removed
// by QueryOf, "===" here), RubyGems and Maven write it.
var exactVersion = regexp.MustCompile(`^(={1,3}\s*)?v?\d+(\.\d+)*([-+][0-9A-Za-z.+-]*)?$`)

// isRange reports whether a manifest's version v of ecosystem eco names
// more than one version ("" names every one). Go versions are always exact; a crate's bare
// version is a caret range unless written "=1.2.3"; a Maven or Gradle
// range is bracketed or ends in "+".
func isRange(eco, v string) bool {
	v = strings.TrimSpace(v)
	switch {
	case eco == "go" || strings.ContainsAny(v, "/@:"):
		// A URL, path or VCS source is not a version at all.
		return false
	case eco == "rust":
		return !strings.HasPrefix(v, "=") || !exactVersion.MatchString(v)
	}
	return !exactVersion.MatchString(v)
}

// lockedVersion is the version of d a lockfile in d's manifest's
// directory holds; ok is false when none does, or it holds several (npm
// nests one per dependent) and which one the manifest's resolves to is
// not known here.
func lockedVersion(files []File, d Dependency) (string, bool) {
	versions := map[string]bool{}
	for _, f := range files {
		df := depFileOf(f.Path)
		if df == nil || !df.lock || df.what != d.What || f.New == nil || path.Dir(f.Path) != path.Dir(d.Path) {
			continue
		}
		for _, l := range df.read(f.New) {
			if sameName(d.What, l.Name, d.Name) {
				versions[strings.TrimPrefix(strings.TrimSpace(l.Version), "==")] = true
			}
		}
	}
	if len(versions) != 1 {
		return "", false
	}
	for v := range versions {
		return v, v != ""
	}
	return "", false
}

func sameName(what, a, b string) bool {
	if what == "Python package" {
		return pyName(a) == pyName(b)
	}
	return a == b
}

// boundRE is one constraint of a range: an operator and a version, the
// version's last parts possibly a wildcard (1.2.*, 1.x, 1.+).
var boundRE = regexp.MustCompile(`(\^|~>|~=|~|>=|<=|>|<|!=|===|==|=)?\s*v?(\d+(?:\.(?:\d+|[*xX]))*(?:\.?\+)?(?:-[0-9A-Za-z.-]+)?)`)

// lowerBound is the least version a range admits, as near as one
// version can say it: the first constraint that is not an upper bound
// or an exclusion, its wildcard parts 0; "" when there is none (`<2`,
// `*`, a bare name). A Maven range's lower bound is before its comma.
func lowerBound(eco, v string) string {
	v = strings.TrimSpace(v)
	if eco == "maven" && strings.ContainsAny(v[:min(len(v), 1)], "[(") {
		lower, _, _ := strings.Cut(strings.Trim(v, "[]()"), ",")
		return strings.TrimSpace(lower)
	}
	for _, m := range boundRE.FindAllStringSubmatch(v, -1) {
		switch m[1] {
		case "<", "<=", "!=":
			continue
		}
		return zeroWildcards(eco, m[2])
	}
	return ""
}

// zeroWildcards writes a version's wildcard parts as 0, and completes
// it to three parts for the ecosystems whose versions are semver.
func zeroWildcards(eco, v string) string {
	v = strings.TrimSuffix(strings.TrimSuffix(v, "+"), ".")
	parts := strings.Split(v, ".")
	for i, p := range parts {
		if p == "*" || p == "x" || p == "X" {
			parts = parts[:i]
			break
		}
	}
	if len(parts) == 0 {
		return ""
	}
	switch eco {
	case "npm", "rust", "composer":
		for len(parts) < 3 && !strings.Contains(parts[len(parts)-1], "-") {
			parts = append(parts, "0")
		}
	default:
		if len(parts) < len(strings.Split(v, ".")) {
			parts = append(parts, "0")
		}
	}
	return strings.Join(parts, ".")
}
