package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/jobs/gitrepo"
	"github.com/patchwright/patchwright/verify/findings"
)

// TestTrustTableRules reads trustTable and holds every row to the rules
// of issue 40.
func TestTrustTableRules(t *testing.T) {
	seen := map[stage]bool{}
	for _, row := range trustTable {
		if seen[row.Stage] {
			t.Errorf("%s has two rows", row.Stage)
		}
		seen[row.Stage] = true
		if row.Tree.modelWrote() && row.Secrets {
			t.Errorf("%s runs on a tree a model wrote and gets the setup-only secrets", row.Stage)
		}
		if row.Tree.modelWrote() && row.Cache == volShared && row.CacheWrites {
			t.Errorf("%s runs on a tree a model wrote and writes the shared cache a later job trusts", row.Stage)
		}
		if row.Tree.modelWrote() && row.Leaves == leavesTrusted {
			t.Errorf("%s runs on a tree a model wrote, and later phases trust what it leaves", row.Stage)
		}
		if row.Tree.modelWrote() && row.Code != codeNo && row.Network == netAllowlist && row.Leaves != leavesAgent && row.Leaves != leavesChecked {
			t.Errorf("%s runs a model's code with the setup network, and what it leaves reaches a phase untainted", row.Stage)
		}
		if row.Secrets && (row.Tree != treeDefault || row.Checks) {
			t.Errorf("%s gets the setup-only secrets but is not the first setup on the default branch", row.Stage)
		}
		if row.Tree == treeHost && (row.Cache != volNone || row.Network != netNone || row.Secrets || row.Code != codeNo) {
			t.Errorf("%s runs on the host, yet has a sandbox's cache, network, secrets or code", row.Stage)
		}
		if row.Cache != volNone && !row.CacheWrites && !row.Tree.modelWrote() {
			// ownVolume's fallback is a job's own copy: fine for the
			// model's trees, a waste for a trusted one, which writes.
			t.Errorf("%s runs on a tree no model wrote, yet gets a private copy of its cache", row.Stage)
		}
		if row.Checks && row.Network == netAllowlist {
			t.Errorf("%s runs the checks with the setup network", row.Stage)
		}
	}
	for _, s := range []stage{stageClone, stageSetup, stageBaseline, stageRetryBaseline, stageAgent, stageFetch, stageDeps, stageFinal, stageScan, stageCommit} {
		if !seen[s] {
			t.Errorf("%s has no row", s)
		}
	}
}

// TestTrustTableWriters: every volume a phase reads is written only by
// phases whose output that reader may trust. A phase on the model's tree
// writes only a volume of the job's, and the checks read one only
// through dependency setup after the change, which taints them
// (leavesChecked) when its commands ran the tree's code.
func TestTrustTableWriters(t *testing.T) {
	for _, w := range trustTable {
		if !w.CacheWrites || !w.Tree.modelWrote() {
			continue
		}
		if w.Cache != volJob && w.Cache != volFetch {
			t.Errorf("%s runs on a tree a model wrote and writes the %s cache", w.Stage, w.Cache)
		}
		for _, reader := range trustTable {
			if reader.Cache != w.Cache || reader.Stage == w.Stage {
				continue
			}
			if reader.Checks && w.Leaves != leavesChecked {
				t.Errorf("%s reads the %s cache that %s writes on the model's tree, and nothing taints them", reader.Stage, w.Cache, w.Stage)
			}
			if w.Leaves == leavesAgent && reader.Stage != stageAgent {
				t.Errorf("%s reads the %s cache, which only the agent may read", reader.Stage, w.Cache)
			}
		}
	}
	if rowOf(stageDeps).Code != codeByCommand || rowOf(stageDeps).Leaves != leavesChecked {
		t.Errorf("dependency setup after the change: %+v, want its commands judged and the checks tainted", rowOf(stageDeps))
	}
}

// TestSpecForFollowsRows: the spec each stage's sandbox gets is its row:
// the cache volume and whether it is written, the network, the secrets
// and the checks' environment. An Executor without caches gives none.
func TestSpecForFollowsRows(t *testing.T) {
	secret := map[string]string{"NPM_TOKEN": "s3cret-value"}
	yes := true
	newRun := func() *run {
		return &run{
			e:     &Executor{CacheVolume: func(string) string { return "shared" }},
			job:   Job{ID: "j"},
			clone: cloneResult{image: "img", cfg: config.Config{SetupNetwork: &yes}},
			first: firstSetup{setupSecrets: secret},
		}
	}
	r := newRun()
	for _, row := range trustTable {
		if row.Tree == treeHost {
			continue
		}
		spec := r.specFor(row.Stage, "/w")
		if spec.Image != "img" || spec.Workspace != "/w" || spec.JobID != "j" {
			t.Errorf("%s: spec %+v lacks the run's image, tree or job", row.Stage, spec)
		}
		if spec.CacheReadOnly == row.CacheWrites {
			t.Errorf("%s: read-only %v, row writes %v", row.Stage, spec.CacheReadOnly, row.CacheWrites)
		}
		if row.Tree.modelWrote() && !spec.CacheReadOnly && spec.CacheVolume == "shared" {
			t.Errorf("%s writes the shared cache", row.Stage)
		}
		if got := spec.Network; got != (row.Network == netAllowlist) || (got && spec.Egress == nil) {
			t.Errorf("%s: network %v egress %v, row %s", row.Stage, got, spec.Egress, row.Network)
		}
		hasSecret := slices.ContainsFunc(spec.Env, func(e string) bool { return strings.Contains(e, "s3cret-value") })
		if hasSecret != row.Secrets {
			t.Errorf("%s: secrets in env %v, row %v", row.Stage, hasSecret, row.Secrets)
		}
		if slices.Equal(spec.Env, r.checksEnv()) != row.Checks {
			t.Errorf("%s: env %q, row runs checks %v", row.Stage, spec.Env, row.Checks)
		}
	}
	// The volumes: the fetch and the job's own are separate, each a copy
	// of the shared one made by its first writer, read by their readers.
	r = newRun()
	if s := r.specFor(stageAgent, "/w"); s.CacheVolume != "shared" || s.CacheFrom != "" {
		t.Errorf("agent before any fetch: %+v, want a copy of the shared cache", s)
	}
	if s := r.specFor(stageFetch, "/w"); s.CacheVolume != "shared-fetch-j" || s.CacheFrom != "shared" || s.CacheReadOnly {
		t.Errorf("fetch_dependencies: %+v, want its own volume seeded from the shared one", s)
	}
	if s := r.specFor(stageAgent, "/w"); s.CacheVolume != "shared-fetch-j" || !s.CacheReadOnly {
		t.Errorf("agent after a fetch: %+v, want a copy of the fetch volume", s)
	}
	if s := r.specFor(stageFinal, "/w"); s.CacheVolume != "shared" {
		t.Errorf("final checks after a fetch: %+v: they must not read what fetch_dependencies fetched", s)
	}
	if s := r.specFor(stageDeps, "/w"); s.CacheVolume != "shared-job-j" || s.CacheFrom != "shared" || s.CacheReadOnly {
		t.Errorf("dependency setup after the change: %+v, want the job's own volume seeded from the shared one", s)
	}
	if s := r.specFor(stageFinal, "/w"); s.CacheVolume != "shared-job-j" || !s.CacheReadOnly {
		t.Errorf("final checks: %+v, want a copy of the job's volume", s)
	}
	noCache := &run{e: &Executor{}, job: Job{ID: "j"}}
	for _, row := range trustTable {
		if s := noCache.specFor(row.Stage, "/w"); s.CacheVolume != "" || s.CacheFrom != "" {
			t.Errorf("%s without caches: %+v", row.Stage, s)
		}
	}
}

// TestRunsTreeCode is the rule of which dependency setup command runs
// code of the changed tree.
func TestRunsTreeCode(t *testing.T) {
	files := map[string]string{
		"requirements.txt":         "--index-url http://pypi.test/simple/\n--trusted-host pypi.test\nrequests==2.31.0  # pinned\nattrs[tests] >=23; python_version>'3.8'\n",
		"req-local.txt":            "requests\n-e .\n",
		"req-url.txt":              "textcase @ https://example.com/textcase.tar.gz\n",
		"req-wheels.txt":           "--find-links ./wheels\ntextcase\n",
		"svc/requirements/dev.txt": "pytest\n",
		"pom.xml":                  "<project><dependencies/></project>\n",
		"ext/pom.xml":              "<project><build><extensions><extension/></extensions></build></project>\n",
	}
	read := func(p string) []byte {
		if s, ok := files[p]; ok {
			return []byte(s)
		}
		return nil
	}
	for name, tc := range map[string]struct {
		cmd        string
		configured bool
		changed    []string
		want       bool
	}{
		"configured setup":               {cmd: "make deps", configured: true, want: true},
		"configured go download":         {cmd: "go mod download", configured: true, want: true},
		"go download":                    {cmd: goDownload, changed: []string{"go.mod"}, want: false},
		"go download in a dir":           {cmd: "cd 'svc' && " + goDownload, changed: []string{"svc/go.mod"}, want: false},
		"npm ci":                         {cmd: npmCI, changed: []string{"package.json", "package-lock.json"}, want: false},
		"npm ci, .npmrc added":           {cmd: npmCI, changed: []string{"package.json", ".npmrc"}, want: true},
		"npm ci, nested .npmrc":          {cmd: "cd 'web' && " + npmCI, changed: []string{"web/.npmrc"}, want: true},
		"npm without a lock":             {cmd: npmNoLock, changed: []string{"package.json"}, want: false},
		"yarn, .yarnrc.yml":              {cmd: yarnInstall, changed: []string{"yarn.lock", ".yarnrc.yml"}, want: true},
		"yarn, a plugin":                 {cmd: yarnInstall, changed: []string{".yarn/plugins/p.cjs"}, want: true},
		"pnpm, a pnpmfile":               {cmd: pnpmInstall, changed: []string{".pnpmfile.cjs"}, want: true},
		"pip editable":                   {cmd: pipInstall + "-e .", changed: []string{"pyproject.toml"}, want: true},
		"pip requirements, plain":        {cmd: pipInstall + "-r 'requirements.txt'", changed: []string{"requirements.txt"}, want: false},
		"pip requirements, unchanged":    {cmd: pipInstall + "-r 'req-local.txt'", changed: []string{"setup.cfg"}, want: false},
		"pip requirements, editable":     {cmd: pipInstall + "-r 'req-local.txt'", changed: []string{"req-local.txt"}, want: true},
		"pip requirements, a URL":        {cmd: pipInstall + "-r 'req-url.txt'", changed: []string{"req-url.txt"}, want: true},
		"pip requirements, local wheels": {cmd: pipInstall + "-r 'req-wheels.txt'", changed: []string{"req-wheels.txt"}, want: true},
		"pip requirements, unreadable":   {cmd: pipInstall + "-r 'gone.txt'", changed: []string{"gone.txt"}, want: true},
		"pip requirements in a dir":      {cmd: "cd 'svc' && " + pipInstall + "-r 'requirements/dev.txt'", changed: []string{"svc/requirements/dev.txt"}, want: false},
		"pip, the venv edited":           {cmd: pipInstall + "-r 'requirements.txt'", changed: []string{".venv/bin/python"}, want: true},
		"cargo fetch":                    {cmd: "cargo fetch", changed: []string{"Cargo.toml"}, want: false},
		"cargo fetch, config":            {cmd: "cargo fetch", changed: []string{".cargo/config.toml"}, want: true},
		"cargo fetch, toolchain":         {cmd: "cargo fetch", changed: []string{"rust-toolchain.toml"}, want: true},
		"maven":                          {cmd: "mvn -B -q dependency:go-offline", changed: []string{"pom.xml"}, want: false},
		"maven, an extension":            {cmd: "mvn -B -q dependency:go-offline", changed: []string{"ext/pom.xml"}, want: true},
		"maven, .mvn":                    {cmd: "mvn -B -q dependency:go-offline", changed: []string{".mvn/jvm.config"}, want: true},
		"bundle":                         {cmd: "bundle install", changed: []string{"Gemfile"}, want: true},
		"composer":                       {cmd: "composer install --no-interaction --no-progress", changed: []string{"composer.json"}, want: true},
		"composer, no scripts":           {cmd: "composer install --no-scripts --no-plugins", changed: []string{"composer.json"}, want: false},
		"gradle":                         {cmd: "cd 'app' && gradle dependencies", changed: []string{"app/build.gradle"}, want: true},
		"an unknown command":             {cmd: "./get-deps.sh", changed: []string{"go.mod"}, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, why := runsTreeCode(treeCodeInput{Command: tc.cmd, Configured: tc.configured, Changed: tc.changed, Read: read})
			if got != tc.want {
				t.Fatalf("runsTreeCode = %v (%s), want %v", got, why, tc.want)
			}
			if got == (why == "") {
				t.Errorf("why %q for %v", why, got)
			}
		})
	}
}

// TestUntrustedSetupBlocks: the finding blocks verified, and its detail
// is the reason, ahead of verify/findings' blocking kinds.
func TestUntrustedSetupBlocks(t *testing.T) {
	ev := []findings.Finding{
		{Kind: findings.TestSkipped, Detail: "A skip was added."},
		{Kind: findings.NewDependency, Detail: "new"},
		{Kind: KindUntrustedSetup, Detail: "The dependencies the final checks used were installed by code the change controls."},
	}
	got := findings.Blocking(ev)
	if len(got) != 2 || got[0].Detail != ev[2].Detail || got[1].Detail != ev[0].Detail {
		t.Fatalf("blocking %v", got)
	}
	if findings.Blocking(ev[1:2]) != nil {
		t.Errorf("a new_dependency finding blocks")
	}
}

// TestWrittenPaths: a deletion runs nothing.
func TestWrittenPaths(t *testing.T) {
	got := writtenPaths([]gitrepo.Change{{Path: "a", Kind: gitrepo.Added}, {Path: ".npmrc", Kind: gitrepo.Deleted}, {Path: "b", Kind: gitrepo.Modified}})
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("written %q", got)
	}
}

// TestChecksIgnoreAnUntrackedGoWork: the checks' sandboxes run with
// GOWORK=off unless the cloned commit tracks a go.work, so a go.work the
// model adds cannot point the final go test at another copy of a module;
// a repository whose commit tracks one keeps its workspace (an edit of
// it is a changed harness, testsrc).
func TestChecksIgnoreAnUntrackedGoWork(t *testing.T) {
	for _, tracked := range []bool{false, true} {
		r := &run{e: &Executor{}, job: Job{ID: "j"}, clone: cloneResult{image: "img", goWork: tracked}}
		for _, s := range []stage{stageBaseline, stageFinal} {
			off := slices.Contains(r.specFor(s, "/tree").Env, "GOWORK=off")
			if off == tracked {
				t.Errorf("%s, go.work tracked %v: GOWORK=off set %v", s, tracked, off)
			}
		}
	}
}
