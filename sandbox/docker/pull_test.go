package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/registrytest"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// tinyImage builds, once per content, an image of a few megabytes: the
// shell, sleep, head, chmod and cat of the test image and their C
// library, enough for a sandbox's commands, and an ENTRYPOINT that exits
// at once, as a public image's start script would break the sandbox's
// sleep if it ran.
func tinyImage(t *testing.T) string {
	t.Helper()
	src := sandboxtest.Image(t)
	dockerfile := "FROM " + src + " AS src\nFROM scratch\n" +
		"COPY --from=src /usr/bin/dash /bin/sh\n" +
		"COPY --from=src /usr/bin/sleep /usr/bin/head /usr/bin/chmod /usr/bin/cat /usr/bin/false /bin/\n" +
		"COPY --from=src /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/\n" +
		"COPY --from=src /lib64/ld-linux-x86-64.so.2 /lib64/\n" +
		"ENV PATH=/bin\nENTRYPOINT [\"/bin/false\"]\n"
	return buildOnce(t, "patchwright-test-tiny", dockerfile)
}

// buildOnce builds dockerfile (no context) as name:HASH, once per
// content, and returns that tag.
func buildOnce(t *testing.T, name, dockerfile string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(dockerfile))
	tag := name + ":" + hex.EncodeToString(sum[:6])
	cli := registrytest.Client(t)
	ctx := context.Background()
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		return tag
	}
	var tarCtx bytes.Buffer
	tw := tar.NewWriter(&tarCtx)
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))})
	tw.Write([]byte(dockerfile))
	tw.Close()
	resp, err := cli.ImageBuild(ctx, &tarCtx, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil || msg.Error != "" {
			t.Fatalf("build %s: %v %s", tag, err, msg.Error)
		}
	}
	return tag
}

// uniqueRepo is a repository name no other test or run uses.
func uniqueRepo(t *testing.T) string {
	return fmt.Sprintf("patchwright-test/%s-%d", strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), time.Now().UnixNano())
}

// runIn creates a sandbox of ref with no cache volume, runs `echo ok` in
// it and returns the image ID its container was created from.
func runIn(t *testing.T, d *docker.Docker, cli *client.Client, ref string) string {
	t.Helper()
	sb, err := d.Create(context.Background(), sandbox.Spec{Image: ref, Workspace: sandboxtest.Workspace(t), JobID: "test-pull"})
	if err != nil {
		t.Fatalf("create a sandbox of %s: %v", ref, err)
	}
	defer sb.Close()
	res, err := sb.Exec(context.Background(), sandbox.Command{Script: "echo ok"})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout.Head)) != "ok" {
		t.Fatalf("echo ok in %s = %+v, %v", ref, res, err)
	}
	info, err := cli.ContainerInspect(context.Background(), sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	return info.Image
}

// TestResolveImagePullsFromAllowedRegistry: an image the engine lacks, on
// a registry the operator allows, is pulled and resolved to the
// registry's digest; a sandbox runs in it though its ENTRYPOINT exits at
// once; and once the tag moves (on the registry and on the engine) the
// resolved reference still names the first image.
func TestResolveImagePullsFromAllowedRegistry(t *testing.T) {
	reg := registrytest.Start(t, "", "")
	repo := uniqueRepo(t)
	reg.RemoveImages(t, repo)
	want := reg.Push(t, tinyImage(t), repo, "v1", "first")
	d := sandboxtest.NewDocker(t, docker.Options{Pull: docker.PullOptions{Registries: []string{reg.Host}}})
	cli := registrytest.Client(t)
	ref := reg.Host + "/" + repo + ":v1"

	img, err := d.ResolveImage(context.Background(), ref)
	if err != nil {
		t.Fatalf("ResolveImage(%s): %v", ref, err)
	}
	if !img.Pulled || img.Digest != want || img.Use != reg.Host+"/"+repo+"@"+want || img.Ref != ref {
		t.Fatalf("ResolveImage = %+v; want pulled, digest %s", img, want)
	}
	first := runIn(t, d, cli, img.Use)

	// The tag moves on the registry, and on the engine by a pull of it.
	moved := reg.Push(t, tinyImage(t), repo, "v1", "second")
	rc, err := cli.ImagePull(context.Background(), ref, image.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, rc)
	rc.Close()
	if got := runIn(t, d, cli, img.Use); got != first {
		t.Errorf("after the tag moved the run's reference gave image %s, want %s", got, first)
	}
	again, err := d.ResolveImage(context.Background(), ref)
	if err != nil || again.Pulled || again.Digest != moved || again.Digest == want {
		t.Errorf("a new resolution after the move = %+v, %v; want the engine's %s, not pulled", again, err, moved)
	}
}

// TestResolveImageRefusesRegistryNotAllowed: an image on a registry the
// operator did not allow is refused before anything asks the registry,
// saying which registry and which are allowed.
func TestResolveImageRefusesRegistryNotAllowed(t *testing.T) {
	reg := registrytest.Start(t, "", "")
	repo := uniqueRepo(t)
	reg.RemoveImages(t, repo)
	reg.Push(t, tinyImage(t), repo, "v1", "refused")
	before := reg.Requests()
	for name, tc := range map[string]struct {
		allowed []string
		say     string
	}{
		"none":    {say: "(allowed: none)"},
		"another": {allowed: []string{"docker.io", "ghcr.io"}, say: "(allowed: docker.io, ghcr.io)"},
	} {
		t.Run(name, func(t *testing.T) {
			d := sandboxtest.NewDocker(t, docker.Options{Pull: docker.PullOptions{Registries: tc.allowed}})
			_, err := d.ResolveImage(context.Background(), reg.Host+"/"+repo+":v1")
			if !errors.Is(err, sandbox.ErrImageUnavailable) {
				t.Fatalf("err = %v; want ErrImageUnavailable", err)
			}
			for _, s := range []string{"its registry " + reg.Host + " is not one the operator allows pulls from", tc.say} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err = %v; want it to say %q", err, s)
				}
			}
		})
	}
	if n := reg.Requests() - before; n != 0 {
		t.Errorf("the registry was asked %d times; a refused registry is never asked", n)
	}
}

// TestResolveImageRegistryCredentials: a registry that wants credentials
// is pulled from with the operator's; without them, or with wrong ones,
// the error says which.
func TestResolveImageRegistryCredentials(t *testing.T) {
	reg := registrytest.Start(t, "robot", "s3cret-token")
	for name, tc := range map[string]struct {
		auth map[string]registry.AuthConfig
		err  string
	}{
		"no credentials":    {err: "wants credentials, and the operator has none for it"},
		"wrong credentials": {auth: map[string]registry.AuthConfig{reg.Host: {Username: "robot", Password: "wr0ng-pass"}}, err: "refused the operator's credentials"},
		"credentials":       {auth: map[string]registry.AuthConfig{reg.Host: {Username: "robot", Password: "s3cret-token"}}},
	} {
		t.Run(name, func(t *testing.T) {
			// A repository of its own: an image another case pulled is
			// on the engine, and is resolved there without credentials.
			repo := uniqueRepo(t)
			reg.RemoveImages(t, repo)
			want := reg.Push(t, tinyImage(t), repo, "v1", "private")
			ref := reg.Host + "/" + repo + ":v1"
			d := sandboxtest.NewDocker(t, docker.Options{Pull: docker.PullOptions{Registries: []string{reg.Host}, Auth: tc.auth}})
			img, err := d.ResolveImage(context.Background(), ref)
			if tc.err == "" {
				if err != nil || !img.Pulled || img.Digest != want {
					t.Fatalf("ResolveImage = %+v, %v; want pulled at %s", img, err, want)
				}
				return
			}
			if !errors.Is(err, sandbox.ErrImageUnavailable) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v; want ErrImageUnavailable saying %q", err, tc.err)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "wr0ng-pass") {
				t.Errorf("the error shows a credential: %v", err)
			}
		})
	}
}

// TestResolveImageLocal: an image built on the engine resolves to its
// image ID without a registry, whatever the allowed registries.
func TestResolveImageLocal(t *testing.T) {
	d := sandboxtest.NewDocker(t, docker.Options{})
	tiny := tinyImage(t)
	cli := registrytest.Client(t)
	info, err := cli.ImageInspect(context.Background(), tiny)
	if err != nil {
		t.Fatal(err)
	}
	img, err := d.ResolveImage(context.Background(), tiny)
	if err != nil || img.Use != info.ID || img.Pulled || img.Digest != "" {
		t.Fatalf("ResolveImage(%s) = %+v, %v; want its ID %s", tiny, img, err, info.ID)
	}
	if _, err := d.ResolveImage(context.Background(), "Not A Reference"); !errors.Is(err, sandbox.ErrImageUnavailable) || !strings.Contains(err.Error(), "is not an image reference") {
		t.Errorf("a bad reference: %v", err)
	}
}

// TestResolveImageCredentialsStayWithTheirRegistry: a registry that
// sends its blob downloads to another host (as registries send them to
// object storage; a hostile one could send them anywhere) gets the
// operator's credentials for it, and the other host never does.
func TestResolveImageCredentialsStayWithTheirRegistry(t *testing.T) {
	reg := registrytest.Start(t, "robot", "s3cret-token")
	repo := uniqueRepo(t)
	reg.RemoveImages(t, repo)
	want := reg.Push(t, tinyImage(t), repo, "v1", "redirected")
	blobs := reg.RedirectBlobs(t)
	d := sandboxtest.NewDocker(t, docker.Options{Pull: docker.PullOptions{Registries: []string{reg.Host},
		Auth: map[string]registry.AuthConfig{reg.Host: {Username: "robot", Password: "s3cret-token"}}}})
	img, err := d.ResolveImage(context.Background(), reg.Host+"/"+repo+":v1")
	if err != nil || !img.Pulled || img.Digest != want {
		t.Fatalf("ResolveImage = %+v, %v; want pulled at %s", img, err, want)
	}
	auths := blobs.Auths()
	if len(auths) == 0 {
		t.Fatal("no download was redirected: the test shows nothing")
	}
	for _, a := range auths {
		if a != "" {
			t.Errorf("the other host was sent Authorization %q", a)
		}
	}
}
