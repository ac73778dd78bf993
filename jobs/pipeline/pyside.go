package pipeline

import (
	"path"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/ini.v1"
)

// Python projects declare what their tests need in more places than
// pyproject.toml's extras and groups. pySideGroups reads the ones
// whose content is static: nothing is run, and what would need running
// (a noxfile's computed arguments, tox's substitutions and factor
// conditions) is left out.

// pySideGroups are the groups of test requirements the project in dir
// declares beside pyproject.toml (pyproject its content): setup.cfg's
// test and dev extras, tox.ini's [testenv] deps, the string arguments of
// noxfile.py's session.install calls, and the plugins pytest's
// configuration requires (required_plugins).
func pySideGroups(read func(string) []byte, dir string, pyproject []byte) []pyGroup {
	at := func(name string) []byte { return read(path.Join(dir, name)) }
	var out []pyGroup
	add := func(file, where string, reqs []string) {
		if len(reqs) > 0 {
			out = append(out, pyGroup{File: file, Where: where, Reqs: reqs})
		}
	}
	if cfg := loadIni(at("setup.cfg")); cfg != nil {
		for _, g := range testGroups {
			add("setup.cfg", "[options.extras_require] "+g, iniList(cfg.Section("options.extras_require").Key(g).String()))
		}
		add("setup.cfg", "[tool:pytest] required_plugins", strings.Fields(cfg.Section("tool:pytest").Key("required_plugins").String()))
	}
	if tox := loadIni(at("tox.ini")); tox != nil {
		add("tox.ini", "[testenv] deps", iniList(tox.Section("testenv").Key("deps").String()))
		add("tox.ini", "[pytest] required_plugins", strings.Fields(tox.Section("pytest").Key("required_plugins").String()))
	}
	if p := loadIni(at("pytest.ini")); p != nil {
		add("pytest.ini", "[pytest] required_plugins", strings.Fields(p.Section("pytest").Key("required_plugins").String()))
	}
	add("noxfile.py", "session.install", noxInstalls(at("noxfile.py")))
	add("pyproject.toml", "[tool.pytest.ini_options] required_plugins", pytestTOMLPlugins(pyproject))
	return out
}

func loadIni(src []byte) *ini.File {
	if src == nil {
		return nil
	}
	f, err := ini.LoadSources(ini.LoadOptions{AllowPythonMultilineValues: true, SpaceBeforeInlineComment: true, Loose: true}, src)
	if err != nil {
		return nil
	}
	return f
}

// toxConditionalRE matches a tox factor-conditional line ("py38: mock",
// "!windows: x"): it applies only to some environments.
var toxConditionalRE = regexp.MustCompile(`^!?[\w.,!-]+:\s`)

// iniList is a multi-line ini value as requirement lines, less those
// that are conditional or substituted ({[base]deps}).
func iniList(v string) []string {
	var out []string
	for _, line := range strings.Split(v, "\n") {
		if i := strings.Index(line, " #"); i >= 0 { // an inline comment
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, "{") || toxConditionalRE.MatchString(line) {
			continue
		}
		out = append(out, line)
	}
	return out
}

var (
	noxInstallRE = regexp.MustCompile(`session\.install\(([^)]*)\)`)
	pyStringRE   = regexp.MustCompile(`"([^"\\]*)"|'([^'\\]*)'`)
)

// noxInstalls are the arguments of noxfile.py's session.install calls
// whose arguments are all string literals; a call with any other
// argument (a variable, a splat) is computed and left out whole.
func noxInstalls(src []byte) []string {
	var out []string
	for _, m := range noxInstallRE.FindAllStringSubmatch(string(src), -1) {
		rest := strings.TrimSpace(strings.NewReplacer(",", "", " ", "", "\n", "", "\t", "").Replace(pyStringRE.ReplaceAllString(m[1], "")))
		if rest != "" {
			continue
		}
		for _, s := range pyStringRE.FindAllStringSubmatch(m[1], -1) {
			out = append(out, s[1]+s[2])
		}
	}
	return out
}

// pytestTOMLPlugins are the required_plugins of pyproject.toml's
// [tool.pytest.ini_options], a list or one space-separated string.
func pytestTOMLPlugins(src []byte) []string {
	var doc struct {
		Tool struct {
			Pytest struct {
				Options struct {
					Plugins any `toml:"required_plugins"`
				} `toml:"ini_options"`
			} `toml:"pytest"`
		} `toml:"tool"`
	}
	if toml.Unmarshal(src, &doc) != nil {
		return nil
	}
	switch v := doc.Tool.Pytest.Options.Plugins.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
