// Package deploy holds no code: its tests read the Dockerfile, the compose
// file and the Kubernetes manifests beside them and check what an operator
// relies on, so a careless edit fails here rather than on someone's
// cluster.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/agent/config"
)

// settings are the environment names the binary reads: docs/design.md §4.2's, the
// SDKs' own, and the queue UI's password. A manifest that sets another
// name sets nothing.
var settings = []string{
	"PATCHWRIGHT_WEBHOOK_SECRET", "PATCHWRIGHT_APP_ID", "PATCHWRIGHT_PRIVATE_KEY",
	"PATCHWRIGHT_PRIVATE_KEY_FILE", "PATCHWRIGHT_REDIS_URL", "PATCHWRIGHT_LISTEN",
	"PATCHWRIGHT_GITHUB_API_URL", "PATCHWRIGHT_MODEL", "PATCHWRIGHT_TRIGGER_LABEL",
	"PATCHWRIGHT_DATA_DIR", "PATCHWRIGHT_SANDBOX_IMAGE", "PATCHWRIGHT_WORKER_CONCURRENCY",
	"PATCHWRIGHT_RUN_URL", "PATCHWRIGHT_PRICES", "PATCHWRIGHT_QUEUE_PASSWORD",
	"PATCHWRIGHT_SHUTDOWN_GRACE", "PATCHWRIGHT_INSTALLATION_CONCURRENCY", "PATCHWRIGHT_REPO_CONCURRENCY",
	"PATCHWRIGHT_REDIS_CA_FILE",
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
	"DOCKER_HOST",
}

// secretSettings may only come from a Secret, never a literal value.
var secretSettings = []string{
	"PATCHWRIGHT_WEBHOOK_SECRET", "PATCHWRIGHT_PRIVATE_KEY", "PATCHWRIGHT_QUEUE_PASSWORD",
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY",
}

// object is one decoded manifest document.
type object struct {
	file string
	doc  map[string]any
}

func (o object) kind() string { return str(o.doc, "kind") }
func (o object) name() string { return str(o.doc, "metadata", "name") }

// get walks nested maps; a missing key or a non-map on the way gives nil.
func get(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, keys ...string) string {
	s, _ := get(v, keys...).(string)
	return s
}

func list(v any, keys ...string) []any {
	l, _ := get(v, keys...).([]any)
	return l
}

// manifests decodes every document of every YAML file under kubernetes/.
func manifests(t *testing.T) []object {
	t.Helper()
	var objs []object
	err := filepath.WalkDir("kubernetes", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				t.Errorf("%s: %v", path, err)
				return nil
			}
			if doc != nil {
				objs = append(objs, object{file: path, doc: doc})
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("no manifests under kubernetes/")
	}
	return objs
}

// containers returns a workload's init and regular containers.
func containers(o object) []map[string]any {
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range list(o.doc, "spec", "template", "spec", key) {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func isWorkload(o object) bool {
	return o.kind() == "Deployment" || o.kind() == "StatefulSet"
}

func TestManifestsDeclareTheEssentials(t *testing.T) {
	objs := manifests(t)
	for _, o := range objs {
		if str(o.doc, "apiVersion") == "" || o.kind() == "" || o.name() == "" {
			t.Errorf("%s: a document without apiVersion, kind or metadata.name", o.file)
		}
		if o.kind() != "Namespace" && str(o.doc, "metadata", "namespace") != "patchwright" {
			t.Errorf("%s: %s %s is not in namespace patchwright", o.file, o.kind(), o.name())
		}
	}
	// Each variant directory must have serve and worker as separate
	// Deployments, scaled independently: the main one all of them.
	want := map[string]bool{
		"Deployment/patchwright-serve": false, "Deployment/patchwright-worker": false,
		"Service/patchwright-serve": false, "StatefulSet/patchwright-redis": false,
		"ConfigMap/patchwright": false, "Namespace/patchwright": false,
	}
	for _, o := range objs {
		if filepath.Dir(o.file) == "kubernetes" {
			if _, ok := want[o.kind()+"/"+o.name()]; ok {
				want[o.kind()+"/"+o.name()] = true
			}
		}
	}
	for k, found := range want {
		if !found {
			t.Errorf("kubernetes/ has no %s", k)
		}
	}
}

var tagged = regexp.MustCompile(`^[^@\s]+:[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

func TestManifestContainers(t *testing.T) {
	for _, o := range manifests(t) {
		if !isWorkload(o) {
			continue
		}
		if len(containers(o)) == 0 {
			t.Errorf("%s: %s has no containers", o.file, o.name())
		}
		for _, c := range containers(o) {
			where := o.file + ": " + o.name() + "/" + str(c, "name")
			img := str(c, "image")
			if !tagged.MatchString(img) || strings.HasSuffix(img, ":latest") {
				t.Errorf("%s: image %q must carry a tag other than latest", where, img)
			}
			for _, r := range []string{"requests.cpu", "requests.memory", "limits.memory"} {
				a, b, _ := strings.Cut(r, ".")
				if get(c, "resources", a, b) == nil {
					t.Errorf("%s: no resources.%s", where, r)
				}
			}
			privileged, _ := get(c, "securityContext", "privileged").(bool)
			// dind runs an engine; the worker mounts each job's work tree
			// and installs firewall rules. Nothing else needs privileges.
			if privileged && str(c, "name") != "dind" && str(c, "name") != "worker" {
				t.Errorf("%s: only dind and the worker may be privileged", where)
			}
			if strings.Contains(img, "/patchwright:") {
				checkEnv(t, where, c)
			}
		}
	}
}

// checkEnv refuses unknown setting names and literal secrets.
func checkEnv(t *testing.T, where string, c map[string]any) {
	t.Helper()
	for _, e := range list(c, "env") {
		name := str(e, "name")
		if !slices.Contains(settings, name) {
			t.Errorf("%s: env %s is not a setting the binary reads", where, name)
		}
		if slices.Contains(secretSettings, name) && get(e, "valueFrom", "secretKeyRef") == nil {
			t.Errorf("%s: %s must come from a Secret", where, name)
		}
	}
}

func TestServeProbes(t *testing.T) {
	found := 0
	for _, o := range manifests(t) {
		if o.kind() != "Deployment" || o.name() != "patchwright-serve" {
			continue
		}
		for _, c := range containers(o) {
			found++
			if p := str(c, "livenessProbe", "httpGet", "path"); p != "/healthz" {
				t.Errorf("%s: serve's liveness probe is %q, want /healthz", o.file, p)
			}
			if p := str(c, "readinessProbe", "httpGet", "path"); p != "/readyz" {
				t.Errorf("%s: serve's readiness probe is %q, want /readyz", o.file, p)
			}
			if !slices.Contains(strs(list(c, "args")), "serve") {
				t.Errorf("%s: serve's container does not run `serve`", o.file)
			}
		}
	}
	if found == 0 {
		t.Fatal("no serve container")
	}
}

func strs(l []any) []string {
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// mountOf returns a container's mount of the named volume, or nil.
func mountOf(c map[string]any, volume string) any {
	for _, m := range list(c, "volumeMounts") {
		if str(m, "name") == volume {
			return m
		}
	}
	return nil
}

// mountPath returns where a container mounts the named volume, or "".
func mountPath(c map[string]any, volume string) string {
	return str(mountOf(c, volume), "mountPath")
}

// TestWorkersSeeTheirEngine checks docs/design.md §5's rule in each worker
// variant: the engine resolves a workspace's bind mount by its path, so
// the data directory must be the same path in the worker and wherever the
// engine runs.
func TestWorkersSeeTheirEngine(t *testing.T) {
	variants := 0
	for _, o := range manifests(t) {
		if o.kind() != "Deployment" || o.name() != "patchwright-worker" {
			continue
		}
		variants++
		var worker, dind map[string]any
		for _, c := range containers(o) {
			switch str(c, "name") {
			case "worker":
				worker = c
			case "dind":
				dind = c
			}
		}
		if worker == nil || !slices.Contains(strs(list(worker, "args")), "worker") {
			t.Errorf("%s: no container `worker` running `worker`", o.file)
			continue
		}
		if p := str(worker, "livenessProbe", "httpGet", "path"); p != "/healthz" {
			t.Errorf("%s: the worker's liveness probe is %q, want /healthz", o.file, p)
		}
		// The setup network's firewall rules (sandbox/docker/network.go).
		if p, _ := get(worker, "securityContext", "privileged").(bool); !p {
			t.Errorf("%s: the worker is not privileged: it installs iptables rules and mounts work trees", o.file)
		}
		if got := str(mountOf(worker, "data"), "mountPropagation"); got != "Bidirectional" {
			t.Errorf("%s: the worker's data mount propagates %q, want Bidirectional (the engine must see the work trees' mounts)", o.file, got)
		}
		dataDir := "/var/lib/patchwright"
		if got := mountPath(worker, "data"); got != dataDir {
			t.Errorf("%s: worker mounts its data volume at %q, want %s", o.file, got, dataDir)
		}
		if dind != nil {
			if got := mountPath(dind, "data"); got != dataDir {
				t.Errorf("%s: dind mounts the data volume at %q, the worker at %s", o.file, got, dataDir)
			}
			if got := str(mountOf(dind, "data"), "mountPropagation"); got != "HostToContainer" && got != "Bidirectional" {
				t.Errorf("%s: dind's data mount propagates %q: it would not see the worker's mounts", o.file, got)
			}
			continue
		}
		var hostPath string
		for _, v := range list(o.doc, "spec", "template", "spec", "volumes") {
			if str(v, "name") == "data" {
				hostPath = str(v, "hostPath", "path")
			}
		}
		if hostPath != dataDir {
			t.Errorf("%s: without dind the data volume must be hostPath %s, got %q", o.file, dataDir, hostPath)
		}
		if mountPath(worker, "docker-socket") != "/var/run/docker.sock" {
			t.Errorf("%s: without dind the worker must mount the node's Docker socket", o.file)
		}
	}
	if variants < 2 {
		t.Errorf("found %d worker variants, want the dind one and the host-socket one", variants)
	}
}

func TestConfigMapNamesAreSettings(t *testing.T) {
	for _, o := range manifests(t) {
		if o.kind() != "ConfigMap" {
			continue
		}
		data, _ := get(o.doc, "data").(map[string]any)
		if len(data) == 0 {
			t.Errorf("%s: empty ConfigMap", o.file)
		}
		for k := range data {
			if !slices.Contains(settings, k) {
				t.Errorf("%s: %s is not a setting the binary reads", o.file, k)
			}
			if slices.Contains(secretSettings, k) {
				t.Errorf("%s: %s belongs in a Secret", o.file, k)
			}
		}
	}
}

func TestRedisKeepsTheQueue(t *testing.T) {
	for _, o := range manifests(t) {
		if o.kind() != "StatefulSet" || o.name() != "patchwright-redis" {
			continue
		}
		for _, c := range containers(o) {
			checkRedisArgs(t, o.file, strs(list(c, "args")))
		}
		if len(list(o.doc, "spec", "volumeClaimTemplates")) == 0 {
			t.Errorf("%s: Redis has no persistent volume", o.file)
		}
	}
}

// checkRedisArgs wants append-only persistence and noeviction: evicting
// keys would silently drop queued jobs and per-issue locks.
func checkRedisArgs(t *testing.T, where string, args []string) {
	t.Helper()
	joined := " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --appendonly yes ", " --maxmemory-policy noeviction "} {
		if !strings.Contains(joined, want) {
			t.Errorf("%s: Redis arguments %q lack %q", where, args, strings.TrimSpace(want))
		}
	}
}

// compose is the part of compose.yaml the tests read.
type compose struct {
	Services map[string]struct {
		Image       string         `yaml:"image"`
		Command     []string       `yaml:"command"`
		Environment map[string]any `yaml:"environment"`
		Volumes     []any          `yaml:"volumes"`
		User        string         `yaml:"user"`
		NetworkMode string         `yaml:"network_mode"`
		Privileged  bool           `yaml:"privileged"`
	} `yaml:"services"`
}

// envRef expands ${NAME:-default} to its default, as compose does with
// NAME unset.
var envRef = regexp.MustCompile(`\$\{[A-Z0-9_]+:-([^}]*)\}`)

func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"redis", "serve", "worker"} {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("compose.yaml has no service %s", name)
		}
		if !tagged.MatchString(envRef.ReplaceAllString(s.Image, "$1")) || strings.HasSuffix(s.Image, ":latest") {
			t.Errorf("service %s: image %q must carry a tag other than latest", name, s.Image)
		}
		for k := range s.Environment {
			if !slices.Contains(settings, k) {
				t.Errorf("service %s: %s is not a setting the binary reads", name, k)
			}
		}
	}
	checkRedisArgs(t, "compose.yaml redis", c.Services["redis"].Command)
	if got := c.Services["serve"].Command; !slices.Equal(got, []string{"serve"}) {
		t.Errorf("serve runs %q", got)
	}
	w := c.Services["worker"]
	if !slices.Equal(w.Command, []string{"worker"}) {
		t.Errorf("worker runs %q", w.Command)
	}
	if !slices.ContainsFunc(w.Volumes, func(v any) bool {
		host, inside, _ := volume(v)
		return host == "/var/run/docker.sock" && inside == host
	}) {
		t.Errorf("worker does not mount the Docker socket: %q", w.Volumes)
	}
	// The setup network's firewall rules (sandbox/docker/network.go) and
	// the loop-mounted work trees (sandbox/docker/disk.go).
	if w.User != "0:0" || w.NetworkMode != "host" || !w.Privileged {
		t.Errorf("worker runs as %q in network %q, privileged %v: it installs iptables rules on the host and mounts filesystems, so it needs root, the host's network and privileges", w.User, w.NetworkMode, w.Privileged)
	}
	if !strings.HasPrefix(envRef.ReplaceAllString(str(w.Environment, "PATCHWRIGHT_REDIS_URL"), "$1"), "redis://127.0.0.1:") {
		t.Errorf("worker in the host's network reaches Redis at %v, want the published loopback port", w.Environment["PATCHWRIGHT_REDIS_URL"])
	}
	dataDir := envRef.ReplaceAllString(str(w.Environment, "PATCHWRIGHT_DATA_DIR"), "$1")
	if dataDir == "" {
		t.Fatal("worker has no PATCHWRIGHT_DATA_DIR")
	}
	for _, name := range []string{"serve", "worker"} {
		same, shared := false, false
		for _, v := range c.Services[name].Volumes {
			host, inside, propagation := volume(v)
			if host == dataDir && inside == dataDir {
				same, shared = true, propagation == "rshared"
			}
		}
		if !same {
			t.Errorf("service %s: the data directory %s is not mounted at the same path as on the host: %q", name, dataDir, c.Services[name].Volumes)
		}
		if name == "worker" && !shared {
			t.Errorf("the worker's data directory is not mounted rshared: the engine would not see the work trees' mounts")
		}
	}
}

// volume reads a compose volume in either syntax, defaults expanded.
func volume(v any) (host, inside, propagation string) {
	switch v := v.(type) {
	case string:
		host, rest, _ := strings.Cut(envRef.ReplaceAllString(v, "$1"), ":")
		inside, _, _ = strings.Cut(rest, ":")
		return host, inside, ""
	case map[string]any:
		return envRef.ReplaceAllString(str(v, "source"), "$1"), envRef.ReplaceAllString(str(v, "target"), "$1"), str(v, "bind", "propagation")
	}
	return "", "", ""
}

// TestComposeConfig asks Compose itself to validate the file, with the
// plugin (`docker compose`) or the standalone docker-compose, whichever is
// installed.
func TestComposeConfig(t *testing.T) {
	var cmd *exec.Cmd
	if exec.Command("docker", "compose", "version").Run() == nil {
		cmd = exec.Command("docker", "compose", "-f", "compose.yaml", "config", "-q")
	} else if path, err := exec.LookPath("docker-compose"); err == nil {
		cmd = exec.Command(path, "-f", "compose.yaml", "config", "-q")
	} else {
		t.Skip("neither `docker compose` nor docker-compose is installed (apt-get install docker-compose)")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

// TestDockerfile checks the choices deploy/Dockerfile explains: cgo for
// tree-sitter, but a static binary; a non-root final stage; pinned bases.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var froms, users []string
	var build string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, f[1])
			users = nil
		case "USER":
			users = append(users, f[1])
		}
		if strings.Contains(line, "go build") {
			build = line
		}
	}
	if len(froms) < 2 {
		t.Fatalf("want a multi-stage build, got stages %q", froms)
	}
	for _, img := range froms {
		if !tagged.MatchString(img) || strings.HasSuffix(img, ":latest") {
			t.Errorf("base image %q must carry a tag other than latest", img)
		}
	}
	if len(users) == 0 || users[len(users)-1] == "root" || strings.HasPrefix(users[len(users)-1], "0") {
		t.Errorf("final stage runs as %q, want a non-root USER", users)
	}
	text := string(b)
	for _, want := range []string{"CGO_ENABLED=1", "-extldflags -static", "netgo", "osusergo", "./cmd/patchwright"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile's build lacks %q (cgo for tree-sitter, linked statically)", want)
		}
	}
	if build == "" {
		t.Error("no go build line")
	}
}

// yamlKeys lists the YAML keys of a struct type, nested ones as
// "parent.child" (the way docs/agent-yml.md names them).
func yamlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && f.Name == "Limits" {
			keys = append(keys, yamlKeys(ft, prefix+name+".")...)
			continue
		}
		keys = append(keys, prefix+name)
	}
	return keys
}

// TestAgentYMLReference: every key agent/config reads has a row in
// docs/agent-yml.md, and the page's example parses with the real parser.
func TestAgentYMLReference(t *testing.T) {
	b, err := os.ReadFile("../docs/agent-yml.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range yamlKeys(reflect.TypeOf(config.Config{}), "") {
		if !strings.Contains(doc, "| `"+k+"` |") {
			t.Errorf("docs/agent-yml.md has no row for `%s`", k)
		}
	}
	start := strings.Index(doc, "```yaml\n")
	end := strings.Index(doc[start+1:], "```\n")
	if start < 0 || end < 0 {
		t.Fatal("no yaml example")
	}
	if _, err := config.Parse([]byte(doc[start+len("```yaml\n") : start+1+end])); err != nil {
		t.Fatalf("the example does not parse: %v", err)
	}
}
