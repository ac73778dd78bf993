package findings

import (
	"encoding/json"
	"regexp"
	"strings"
)

// --- Ruby (Bundler) ---

// gemfileRE is a Gemfile or gemspec dependency line: gem "name", "~> 1.2"
// and add_dependency / add_development_dependency.
var gemfileRE = regexp.MustCompile(`^\s*(?:gem|\w+\.add_(?:runtime_|development_)?dependency)\s*\(?\s*["']([^"']+)["']\s*(?:,\s*["']([^"']+)["'])?`)

func gemfileDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	n := 0
	for l := range strings.Lines(string(src)) {
		n++
		if m := gemfileRE.FindStringSubmatch(l); m != nil {
			out[m[1]] = dep{Name: m[1], Version: m[2], Line: n}
		}
	}
	return out
}

// gemLockRE is a resolved gem in Gemfile.lock's specs: four spaces,
// "name (version)"; its own dependencies are indented six.
var gemLockRE = regexp.MustCompile(`^    ([^\s(]+) \(([^)]+)\)\s*$`)

func gemLockDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	n := 0
	for l := range strings.Lines(string(src)) {
		n++
		if m := gemLockRE.FindStringSubmatch(l); m != nil {
			out[m[1]+"@"+m[2]] = dep{Name: m[1], Version: m[2], Line: n}
		}
	}
	return out
}

// --- PHP (Composer) ---

func composerJSONDeps(src []byte) map[string]dep {
	var c map[string]json.RawMessage
	if json.Unmarshal(src, &c) != nil {
		return nil
	}
	out := map[string]dep{}
	for _, section := range []string{"require", "require-dev"} {
		var deps map[string]string
		if json.Unmarshal(c[section], &deps) != nil {
			continue
		}
		for name, v := range deps {
			if name == "php" || strings.HasPrefix(name, "ext-") {
				continue // the platform, not a package
			}
			out[section+"/"+name] = dep{Name: name, Version: v, Line: jsonLine(src, section, name)}
		}
	}
	return out
}

func composerLockDeps(src []byte) map[string]dep {
	var lock struct {
		Packages    []struct{ Name, Version string } `json:"packages"`
		PackagesDev []struct{ Name, Version string } `json:"packages-dev"`
	}
	if json.Unmarshal(src, &lock) != nil {
		return nil
	}
	out := map[string]dep{}
	for _, p := range append(lock.Packages, lock.PackagesDev...) {
		out[p.Name+"@"+p.Version] = dep{Name: p.Name, Version: p.Version, Line: jsonLine(src, "", p.Name)}
	}
	return out
}

// --- Gradle ---

// gradleDepRE is a dependency declared by coordinates in a Groovy or
// Kotlin build script: implementation 'g:a:v', testImplementation("g:a:v").
var gradleDepRE = regexp.MustCompile(`^\s*(\w+)\s*\(?\s*["']([\w.-]+:[\w.-]+)(?::([^"'@:]+))?[^"']*["']`)

func gradleDeps(src []byte) map[string]dep {
	out := map[string]dep{}
	n := 0
	for l := range strings.Lines(string(src)) {
		n++
		m := gradleDepRE.FindStringSubmatch(l)
		if m == nil || m[1] == "id" || m[1] == "group" || m[1] == "version" {
			continue
		}
		out[m[1]+"/"+m[2]] = dep{Name: m[2], Version: m[3], Line: n}
	}
	return out
}
