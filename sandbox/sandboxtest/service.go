package sandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
)

// ServicePort is the port of the service image's server.
const ServicePort = 6379

// ServiceImage returns an image holding only testdata/service-image's
// kvserver, a line-protocol key-value server on ServicePort (PING, SET k
// v, GET k, FILL path bytes) whose `/kvserver -check` is its health
// command; /data is a volume of the image, as a database's. It is built
// here, offline: the binary with this machine's Go toolchain, the image
// FROM scratch. Built once per source: the tag carries its hash.
func ServiceImage(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Docker and the Go toolchain to build the service image")
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "service-image", "kvserver")
	code, err := os.ReadFile(filepath.Join(src, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	// The data directory is a volume, as a database image's is.
	dockerfile := "FROM scratch\nCOPY kvserver /kvserver\nEXPOSE 6379\nVOLUME /data\nENTRYPOINT [\"/kvserver\"]\n"
	sum := sha256.Sum256(append(code, dockerfile...))
	tag := "patchwright-test-kv:" + hex.EncodeToString(sum[:6])
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		return tag
	}
	bin := filepath.Join(t.TempDir(), "kvserver")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build kvserver: %v\n%s", err, out)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"Dockerfile", 0o644, []byte(dockerfile)},
		{"kvserver", 0o755, binary},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(f.data)
	}
	tw.Close()
	resp, err := cli.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build the service image: %v", err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("build the service image: %v", err)
		}
		if msg.Error != "" {
			t.Fatalf("build the service image: %s", msg.Error)
		}
	}
	return tag
}
