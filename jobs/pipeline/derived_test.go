package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"
)

// derivedLabel holds what a derived image was made from, so an image
// already made from the same base and script is used as it is.
const derivedLabel = "org.patchwright.test.derived"

// deriveImage makes image name from base: script runs in it as root and
// the result is committed once, with base's user and command and the
// Dockerfile instructions in changes (ENV, say). It replaces a docker
// build: the engine's legacy builder commits a layer per instruction,
// and on the fuse-overlayfs storage driver each commit walks the whole
// 1.9 GB test image (a four-line build of mavenImage used 36 s of the
// machine's CPU, this 14 s).
func deriveImage(t *testing.T, name, base, script string, changes ...string) string {
	t.Helper()
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(context.Background(), "docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	from := strings.Split(docker("image", "inspect", "-f", "{{.Id}}\n{{.Config.User}}\n{{json .Config.Entrypoint}}\n{{json .Config.Cmd}}", base), "\n")
	if len(from) != 4 {
		t.Fatalf("docker image inspect %s: %q", base, from)
	}
	sum := sha256.Sum256([]byte(strings.Join(append([]string{from[0], script}, changes...), "\x00")))
	key := hex.EncodeToString(sum[:])
	have, _ := exec.Command("docker", "image", "inspect", "-f", `{{index .Config.Labels "`+derivedLabel+`"}}`, name).Output()
	if strings.TrimSpace(string(have)) == key {
		return name
	}
	if from[2] != "null" {
		t.Fatalf("deriving %s: base %s has an entrypoint, %s, which would run the script", name, base, from[2])
	}
	c := docker("create", "--user", "root", base, "sh", "-ec", script)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", c).Run() })
	docker("start", "-a", c)
	if code := docker("inspect", "-f", "{{.State.ExitCode}}", c); code != "0" {
		t.Fatalf("deriving %s: the script exited %s", name, code)
	}
	args := []string{"commit", "-c", "USER " + from[1], "-c", "CMD " + from[3], "-c", "LABEL " + derivedLabel + "=" + key}
	for _, change := range changes {
		args = append(args, "-c", change)
	}
	docker(append(args, c, name)...)
	return name
}
