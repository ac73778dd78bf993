package findings

import (
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// tomlPackagesDeps reads the [[package]] tables of poetry.lock, uv.lock,
// pdm.lock and Cargo.lock, leaving out the project's own packages: those
// with a local source, and in Cargo.lock those with none (workspace
// members and path crates).
func tomlPackagesDeps(cargo bool) func([]byte) map[string]dep {
	return func(src []byte) map[string]dep { return tomlPackages(src, cargo) }
}

func tomlPackages(src []byte, cargo bool) map[string]dep {
	var lock struct {
		Package []struct {
			Name    string `toml:"name"`
			Version string `toml:"version"`
			Source  any    `toml:"source"`
		} `toml:"package"`
	}
	if toml.Unmarshal(src, &lock) != nil {
		return nil
	}
	out := map[string]dep{}
	for _, p := range lock.Package {
		if localSource(p.Source, cargo) {
			continue
		}
		out[p.Name+"@"+p.Version] = dep{Name: p.Name, Version: p.Version, Line: tomlPackageLine(src, p.Name, p.Version)}
	}
	return out
}

// localSource reports whether a lock entry's source is the project
// itself: uv's editable or virtual, Poetry's directory, a path.
func localSource(source any, cargo bool) bool {
	switch s := source.(type) {
	case nil:
		return cargo
	case map[string]any:
		for _, k := range []string{"editable", "virtual", "directory", "path"} {
			if _, ok := s[k]; ok {
				return true
			}
		}
		return s["type"] == "directory" || s["type"] == "file"
	}
	return false
}

// tomlPackageLine finds `name = "…"` followed by its version line.
func tomlPackageLine(src []byte, name, version string) int {
	lines := strings.Split(string(src), "\n")
	want := `name = "` + name + `"`
	for i, l := range lines {
		if strings.TrimSpace(l) == want && i+1 < len(lines) && strings.Contains(lines[i+1], `"`+version+`"`) {
			return i + 1
		}
	}
	return 0
}
