package verify

import (
	"fmt"
	"regexp"
	"strings"
)

// pyNoModuleRE is Python's error for a module it cannot find, as pytest
// prints it under a collection error: "E   ModuleNotFoundError: No
// module named 'text_unidecode'".
var pyNoModuleRE = regexp.MustCompile(`ModuleNotFoundError: No module named '([A-Za-z_][\w.]*)'`)

// pythonMissingModule reads a Python run's output for a module that
// could not be found and that no file of the change provides, and names
// it; "" when there is none. On the original tree a module the change
// adds is missing by design (the test uses what the change added); one
// it does not add is a dependency the environment lacks (python-slugify
// offline: text_unidecode, which setup could not install).
// The last such error is named: in a chain ("During handling of the
// above exception"), as python-slugify's fallback from unidecode to
// text_unidecode makes, the last is the one the import ended with.
func pythonMissingModule(output string, changed []string) string {
	missing := ""
	for _, line := range outputLines(output) {
		if m := pyNoModuleRE.FindStringSubmatch(line); m != nil && !pyProvidedBy(m[1], changed) {
			missing = m[1]
		}
	}
	if missing == "" {
		return ""
	}
	return fmt.Sprintf("Python cannot import %s, which no file of the change provides: it is a dependency not installed in the image or the project's virtualenv", quoteText(missing))
}

// pyProvidedBy says whether a changed file is the module or lies in its
// package: slug/extra.py, slug/extra/__init__.py or slug/extra/x.py for
// "slug.extra", at the root or below (src/slug/extra.py).
func pyProvidedBy(module string, changed []string) bool {
	p := strings.ReplaceAll(module, ".", "/")
	for _, f := range changed {
		f = "/" + f
		if strings.HasSuffix(f, "/"+p+".py") || strings.Contains(f, "/"+p+"/") {
			return true
		}
	}
	return false
}

// pythonMissingModules makes each Python new test that "does not compile
// against the original code" only because its file could not import a
// dependency one that could not run, naming the module.
func pythonMissingModules(results []NewTestResult, changed []string) {
	for i, res := range results {
		if res.Lang != LangPython || res.Status != BuildFailsBefore {
			continue
		}
		if why := pythonMissingModule(res.Output, changed); why != "" {
			results[i].Status = NotRunBefore
			results[i].Reason = "cannot be shown because the run could not start: " + why
		}
	}
}
