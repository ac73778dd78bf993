package findings

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// pep508 reads the name, and the rest as the version, of a requirement:
// `Name[extra] >=1.0 ; python_version<"3.9"` or `name @ https://…`.
var pep508 = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*(;.*)?$`)

// pyName normalizes a distribution name as PEP 503 does.
func pyName(n string) string {
	return strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(n, "-"))
}

// requirement reads one PEP 508 requirement; raw is the name as written.
func requirement(s string, line int) (d dep, raw string, ok bool) {
	m := pep508.FindStringSubmatch(s)
	if m == nil {
		return dep{}, "", false
	}
	return dep{Name: pyName(m[1]), Version: strings.TrimSpace(m[3]), Line: line}, m[1], true
}

func requirementsDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	n := 0
	for l := range strings.Lines(string(src)) {
		n++
		l = strings.TrimSpace(l)
		if i := strings.Index(l, " #"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.Contains(l, "://") || strings.Contains(l, "git+") || sourceOption(l):
			// A URL or VCS requirement, or an option that changes where
			// every package comes from, is the riskiest kind: name it whole.
			out[l] = dep{Name: l, Line: n}
		case strings.HasPrefix(l, "-"):
		default:
			if d, _, ok := requirement(l, n); ok {
				out[d.Name] = d
			}
		}
	}
	return out
}

// sourceOption reports whether a requirements line is one of pip's
// options that choose or trust an index without a URL of its own
// (`--trusted-host`, an index or links path); those with a URL are named
// by the "://" case.
func sourceOption(l string) bool {
	for _, o := range []string{"--trusted-host", "--index-url", "--extra-index-url", "-i", "--find-links", "-f"} {
		if l == o || strings.HasPrefix(l, o+" ") || strings.HasPrefix(l, o+"=") {
			return true
		}
	}
	return false
}

func pyprojectDeps(src []byte) map[string]dep {
	var doc struct {
		Project struct {
			Dependencies []string            `toml:"dependencies"`
			Optional     map[string][]string `toml:"optional-dependencies"`
		} `toml:"project"`
		Groups      map[string][]any `toml:"dependency-groups"`
		BuildSystem struct {
			Requires []string `toml:"requires"`
		} `toml:"build-system"`
		Tool struct {
			Poetry struct {
				Dependencies    map[string]any `toml:"dependencies"`
				DevDependencies map[string]any `toml:"dev-dependencies"`
				Group           map[string]struct {
					Dependencies map[string]any `toml:"dependencies"`
				} `toml:"group"`
			} `toml:"poetry"`
		} `toml:"tool"`
	}
	if toml.Unmarshal(src, &doc) != nil {
		return nil
	}
	out := map[string]dep{}
	add := func(section string, reqs []string) {
		for _, r := range reqs {
			if d, raw, ok := requirement(r, 0); ok {
				d.Line = lineOfWord(src, raw)
				out[section+"/"+d.Name] = d
			}
		}
	}
	add("project", doc.Project.Dependencies)
	add("build-system", doc.BuildSystem.Requires)
	for g, reqs := range doc.Project.Optional {
		add("optional/"+g, reqs)
	}
	for g, items := range doc.Groups {
		add("group/"+g, groupRequirements(items))
	}
	poetry := func(section string, m map[string]any) {
		for name, v := range m {
			if name == "python" {
				continue
			}
			out[section+"/"+pyName(name)] = dep{Name: pyName(name), Version: tableVersion(v), Line: lineOfWord(src, name)}
		}
	}
	poetry("poetry", doc.Tool.Poetry.Dependencies)
	poetry("poetry-dev", doc.Tool.Poetry.DevDependencies)
	for g, grp := range doc.Tool.Poetry.Group {
		poetry("poetry-group/"+g, grp.Dependencies)
	}
	return out
}

// groupRequirements is the requirement strings of a dependency group,
// leaving out its {include-group = …} tables, which name no package.
func groupRequirements(items []any) []string {
	var reqs []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			reqs = append(reqs, s)
		}
	}
	return reqs
}

// tableVersion reads a TOML dependency value: "1.2", or a table with a
// version, a git URL or a path.
func tableVersion(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		for _, k := range []string{"version", "git", "path", "url"} {
			if s, ok := t[k].(string); ok {
				if k != "version" {
					s = k + " " + s
					for _, ref := range []string{"rev", "tag", "branch"} {
						if r, ok := t[ref].(string); ok {
							s += " " + ref + " " + r
						}
					}
				}
				return s
			}
		}
		if t["workspace"] == true {
			return "workspace"
		}
	}
	return ""
}

func pipfileLockDeps(src []byte) map[string]dep {
	var lock map[string]json.RawMessage
	if json.Unmarshal(src, &lock) != nil {
		return nil
	}
	out := map[string]dep{}
	for _, section := range []string{"default", "develop"} {
		var deps map[string]struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(lock[section], &deps) != nil {
			continue
		}
		for name, d := range deps {
			out[name+"@"+d.Version] = dep{Name: name, Version: d.Version, Line: jsonLine(src, section, name)}
		}
	}
	return out
}
