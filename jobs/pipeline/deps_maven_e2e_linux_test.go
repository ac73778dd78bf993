//go:build e2e

package pipeline

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify"
)

// The artifact the change of testdata/repos/java-deps needs.
const (
	mavenGroup    = "org.example.text"
	mavenArtifact = "textcase"
	mavenVersion  = "1.0"
)

// mavenRepository serves one artifact in a Maven repository's plain
// file layout under /maven2/ (group path, artifact, version: the .pom,
// the .jar and their .sha1; a fixed version needs no maven-metadata.xml)
// and records the paths asked.
type mavenRepository struct {
	files map[string][]byte
	requestLog
}

// newMavenRepository compiles testdata/repos/java-deps/library into the
// artifact's jar, in the test image (which has the JDK).
func newMavenRepository(t *testing.T) *mavenRepository {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(sandboxtest.ReposDir(), "java-deps", "library", "textcase", "Title.java"))
	if err != nil {
		t.Fatal(err)
	}
	build := "mkdir -p /tmp/b/textcase && cat >/tmp/b/textcase/Title.java && cd /tmp/b && " +
		"javac --release 17 -d classes textcase/Title.java >&2 && jar cf lib.jar -C classes . >&2 && cat lib.jar"
	cmd := exec.Command("docker", "run", "--rm", "-i", "--network", "none", sandboxtest.Image(t), "sh", "-c", build)
	cmd.Stdin = bytes.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	jar, err := cmd.Output()
	if err != nil {
		t.Fatalf("build the jar: %v\n%s", err, stderr.String())
	}
	pom := `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>` + mavenGroup + `</groupId>
  <artifactId>` + mavenArtifact + `</artifactId>
  <version>` + mavenVersion + `</version>
</project>
`
	r := &mavenRepository{files: map[string][]byte{}}
	for ext, data := range map[string][]byte{"pom": []byte(pom), "jar": jar} {
		sum := sha1.Sum(data)
		r.files[mavenPath(ext)] = data
		r.files[mavenPath(ext)+".sha1"] = []byte(hex.EncodeToString(sum[:]))
	}
	return r
}

// mavenPath is where the repository serves the artifact's file of
// extension ext.
func mavenPath(ext string) string {
	return "/maven2/" + strings.ReplaceAll(mavenGroup, ".", "/") + "/" + mavenArtifact + "/" + mavenVersion + "/" +
		mavenArtifact + "-" + mavenVersion + "." + ext
}

func (m *mavenRepository) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.record(r.URL.Path)
	data, ok := m.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(data)
}

// mavenImage derives from the test image one whose Maven is set up as
// deploy/sandbox/Dockerfile sets it up: MAVEN_OPTS puts the local
// repository in the cache volume (so what setup downloads is there for
// the offline checks), and the global settings neither force offline
// mode nor name a local repository. That repository starts as a copy of
// Debian's packaged plugins, its links to /usr/share/java kept working
// through a link beside it. Offline: nothing is installed.
func mavenImage(t *testing.T) string {
	t.Helper()
	return deriveImage(t, "patchwright-sandbox-maven-test:latest", sandboxtest.Image(t),
		`printf '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0"/>\n' >/etc/maven/settings.xml
mkdir -p /home/agent/.cache/m2
cp -a /usr/share/maven-repo /home/agent/.cache/m2/repository
ln -s /usr/share/java /home/agent/.cache/m2/java
chown -hR 1000:1000 /home/agent/.cache/m2`,
		`ENV MAVEN_OPTS="-Dmaven.repo.local=/home/agent/.cache/m2/repository -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"`)
}

// javaDepsRepo is testdata/repos/java-deps with its POM naming the
// repository at host and agent.yml's setup (a compile, which resolves
// the dependencies: the image has no maven-dependency-plugin for
// dependency:go-offline) and network section.
func javaDepsRepo(t *testing.T, host, network string) (repo, pom string) {
	t.Helper()
	files := fixtureFiles(t, "java-deps")
	for name, content := range files {
		files[name] = strings.ReplaceAll(content, "REPOSITORY_HOST", host)
	}
	files[".github/agent.yml"] = "setup:\n  - mvn -B -q test-compile\n" + network
	return gitRepo(t, files), files["pom.xml"]
}

// javaDepsTurns add the dependency to the POM, use it and finish.
func javaDepsTurns(pom string) []pt.Turn {
	dep := "    <dependency>\n      <groupId>" + mavenGroup + "</groupId>\n      <artifactId>" + mavenArtifact +
		"</artifactId>\n      <version>" + mavenVersion + "</version>\n    </dependency>\n"
	changed := strings.Replace(pom, "  <dependencies>\n", "  <dependencies>\n"+dep, 1)
	code := "package demo;\n\nimport textcase.Title;\n\n/** Badge makes the text of name badges. */\npublic final class Badge {\n" +
		"    private Badge() {}\n\n    /** of is the text of a name badge. */\n    public static String of(String name) {\n" +
		"        return \"Hello, \" + Title.of(name);\n    }\n}\n"
	return []pt.Turn{
		call("read_file", `{"path":"pom.xml"}`),
		call("write_file", `{"path":"pom.xml","content":`+jsonString(changed)+`}`),
		call("read_file", `{"path":"src/main/java/demo/Badge.java"}`),
		call("write_file", `{"path":"src/main/java/demo/Badge.java","content":`+jsonString(code)+`}`),
		call("finish", `{"summary":"Badges use textcase's Title."}`),
	}
}

var javaDepsIssue = agent.Issue{Title: "Badges show names in lower case", Body: "Use the textcase library from our repository to title-case badge names."}

// TestMavenDependencyAfterTheChange (issue 24): a Java change that needs
// an artifact only the company's Maven repository on a fake host of the
// internet serves (named by the POM and by network.allow). The model adds
// it to pom.xml and uses it; it never fetches anything. Dependency setup
// after the change runs the repository's setup (a Maven compile) on a
// copy of the committed tree; Maven, which reads no HTTP_PROXY, reaches
// the repository through the egress proxy (the only way out of the setup
// network), the artifact lands in the local repository in the cache
// volume, and the offline `mvn -o test` of the final checks passes; the
// run is unverified, since the configured setup may run the change's code
// (issue 40).
func TestMavenDependencyAfterTheChange(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := mavenImage(t)
	mrepo := newMavenRepository(t)
	host := sandboxtest.FakeHost(t, mrepo)
	repo, pom := javaDepsRepo(t, host, "network:\n  allow: ['"+host+"']\n")
	res, out, _ := scenario{
		repo:        repo,
		image:       image,
		issue:       javaDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       javaDepsTurns(pom),
	}.run(t)
	// A configured setup (a compile: annotation processors are the
	// tree's code) on the changed tree: the checks passed, unverified
	// (issue 40).
	wantUntrustedSetup(t, res, out, "`mvn -B -q test-compile`")
	if !slices.Contains(mrepo.paths(), mavenPath("jar")) {
		t.Errorf("the repository never served the jar: %q", mrepo.paths())
	}
	setups := dependencyEvents(t, out)
	if len(setups) != 1 || setups[0].Failed() || !slices.Equal(setups[0].Manifests, []string{"pom.xml"}) ||
		len(setups[0].Commands) != 1 || setups[0].Commands[0].Command != "mvn -B -q test-compile" {
		t.Fatalf("dependency setups %+v, want one passing mvn -B -q test-compile for pom.xml", setups)
	}
	if refused := egressRefusals(t, out); len(refused) != 0 {
		t.Errorf("refused connections %+v, want none", refused)
	}
	body := readBody(t, out)
	for _, want := range []string{"**Dependencies**", "`" + mavenGroup + ":" + mavenArtifact + "`", "`mvn -B -q test-compile`"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}

// TestMavenDependencyRefused: the same change, but network.allow does not
// name the repository. The proxy refuses Maven's connection, the offline
// checks cannot resolve the artifact, and "Not verified" and the ledger
// name the refused connection and the command.
func TestMavenDependencyRefused(t *testing.T) {
	sandboxtest.EndToEnd(t)
	image := mavenImage(t)
	mrepo := newMavenRepository(t)
	host := sandboxtest.FakeHost(t, mrepo)
	repo, pom := javaDepsRepo(t, host, "")
	res, out, _ := scenario{
		repo:        repo,
		image:       image,
		issue:       javaDepsIssue,
		wire:        provider.NameOpenAI,
		cacheVolume: testCacheVolume(t),
		turns:       javaDepsTurns(pom),
	}.run(t)
	if res.Outcome == verify.Verified {
		t.Fatalf("outcome verified without the artifact's repository on the allowlist")
	}
	if len(mrepo.paths()) != 0 {
		t.Errorf("the repository was reached: %q", mrepo.paths())
	}
	wantSetupRefused(t, out, host, "mvn -B -q test-compile")
}
