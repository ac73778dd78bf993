package verify

import (
	"fmt"
	"regexp"
	"strings"
)

// rubyLoadErrorRE is Ruby's LoadError for a required feature: "x_spec.rb:1:in
// `require': cannot load such file -- rack (LoadError)". A bare feature,
// not a path: require_relative names its file by absolute path, and that
// is always the project's own.
var rubyLoadErrorRE = regexp.MustCompile(`cannot load such file -- ([A-Za-z0-9_][\w.+-]*(?:/[\w.+-]+)*) \(LoadError\)$`)

// rubyMissingGem reads a Ruby run's output for a LoadError of a feature
// that no file of the change provides, and names it; "" when there is
// none. On the original tree a feature the change adds is missing by
// design (the test uses what the change added), one it does not add is a
// gem the image or the bundle lacks.
func rubyMissingGem(output string, changed []string) string {
	for _, line := range outputLines(output) {
		m := rubyLoadErrorRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || providedBy(m[1], changed) {
			continue
		}
		gem, _, _ := strings.Cut(m[1], "/")
		return fmt.Sprintf("Ruby cannot load %s (LoadError), which no file of the project or the change provides: the gem %s is not installed in the image or not in the bundle", quoteText(m[1]), quoteText(gem))
	}
	return ""
}

// providedBy says whether a changed file is the Ruby feature: a path
// ending in feature.rb (lib/slug/extra.rb for "slug/extra").
func providedBy(feature string, changed []string) bool {
	want := strings.TrimSuffix(feature, ".rb") + ".rb"
	for _, f := range changed {
		if f == want || strings.HasSuffix(f, "/"+want) {
			return true
		}
	}
	return false
}

// rubyMissingGems makes each Ruby new test that "does not compile against
// the original code" only because its run stopped at a missing gem (roda's
// specs without rack) one that could not run, naming the gem.
func rubyMissingGems(results []NewTestResult, changed []string) {
	for i, res := range results {
		if res.Lang != LangRuby || res.Status != BuildFailsBefore {
			continue
		}
		if why := rubyMissingGem(res.Output, changed); why != "" {
			results[i].Status = NotRunBefore
			results[i].Reason = "cannot be shown because the run could not start: " + why
		}
	}
}
