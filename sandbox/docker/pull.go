package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/patchwright/patchwright/sandbox"
)

// PullOptions say which images the engine may pull for a job, and with
// which credentials. The zero value pulls nothing: every image must
// already be on the engine.
type PullOptions struct {
	// Registries are the registry hosts (RegistryHost's form:
	// "docker.io", "ghcr.io", "registry.example.com:5000") an image the
	// engine does not have may be pulled from; nil: none.
	Registries []string
	// Auth are the operator's credentials by registry host
	// (ParseRegistryAuth). They go to the engine with the pull and
	// nowhere else: never into a container.
	Auth map[string]registry.AuthConfig
}

// ResolveImage resolves ref once for a job (sandbox.Image): an image the
// engine has is used as it is, by its registry digest or its local ID;
// one it does not have is pulled when its registry is one of
// PullOptions.Registries, with that registry's credentials, and refused
// before any pull otherwise. Refusals and failed pulls wrap
// sandbox.ErrImageUnavailable.
func (d *Docker) ResolveImage(ctx context.Context, ref string) (sandbox.Image, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return sandbox.Image{}, fmt.Errorf("image %q is not an image reference (%v): %w", ref, err, sandbox.ErrImageUnavailable)
	}
	img, err := d.localImage(ctx, ref, named)
	if err == nil || !cerrdefs.IsNotFound(err) {
		return img, err
	}
	host := reference.Domain(named)
	if !slices.Contains(d.pull.Registries, host) {
		allowed := "none"
		if len(d.pull.Registries) > 0 {
			allowed = strings.Join(d.pull.Registries, ", ")
		}
		return sandbox.Image{}, fmt.Errorf("image %q is not on the Docker engine and is not pulled: its registry %s is not one the operator allows pulls from (allowed: %s): %w",
			ref, host, allowed, sandbox.ErrImageUnavailable)
	}
	if err := d.pullImage(ctx, named, host); err != nil {
		return sandbox.Image{}, err
	}
	img, err = d.localImage(ctx, ref, named)
	if err != nil {
		return sandbox.Image{}, fmt.Errorf("inspect pulled image %s: %w", ref, err)
	}
	img.Pulled = true
	return img, nil
}

// localImage resolves ref on the engine alone: to NAME@digest when the
// engine has the registry digest of ref's repository, else to the image
// ID. The error is the engine's (NotFound when it has no such image).
func (d *Docker) localImage(ctx context.Context, ref string, named reference.Named) (sandbox.Image, error) {
	inspect, err := d.cli.ImageInspect(ctx, ref)
	if err != nil {
		return sandbox.Image{}, err
	}
	out := sandbox.Image{Ref: ref, Use: inspect.ID}
	for _, rd := range inspect.RepoDigests {
		c, err := reference.ParseNormalizedNamed(rd)
		if err != nil || c.Name() != named.Name() {
			continue
		}
		if dg, ok := c.(reference.Digested); ok {
			out.Use, out.Digest = c.String(), dg.Digest().String()
			break
		}
	}
	return out, nil
}

// pullImage pulls named (its tag, latest when it has none, or its
// digest) with the credentials for host, reading the engine's progress
// to the end: a pull's failure is often only in the stream.
func (d *Docker) pullImage(ctx context.Context, named reference.Named, host string) error {
	named = reference.TagNameOnly(named)
	opts := image.PullOptions{}
	auth, haveAuth := d.pull.Auth[host]
	if haveAuth {
		enc, err := registry.EncodeAuthConfig(auth)
		if err != nil {
			return fmt.Errorf("encode the credentials for %s: %w", host, err)
		}
		opts.RegistryAuth = enc
	}
	rc, err := d.cli.ImagePull(ctx, named.String(), opts)
	if err == nil {
		err = drainPull(rc)
	}
	if err == nil || ctx.Err() != nil {
		return cmpErr(ctx.Err(), err)
	}
	return pullError(named.String(), host, haveAuth, err)
}

// drainPull reads a pull's progress and returns the error it ends with.
func drainPull(rc io.ReadCloser) error {
	defer rc.Close()
	dec := json.NewDecoder(rc)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read the pull's progress: %w", err)
		}
		if m.Error != nil {
			return m.Error
		}
	}
}

// pullError says why a pull failed in words an operator acts on: a
// registry that wants credentials, one that refused the operator's, or
// the engine's own message.
func pullError(ref, host string, haveAuth bool, err error) error {
	msg := err.Error()
	denied := cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err)
	for _, s := range []string{"unauthorized", "authentication required", "no basic auth credentials", "denied"} {
		denied = denied || strings.Contains(strings.ToLower(msg), s)
	}
	switch {
	case denied && haveAuth:
		return fmt.Errorf("image %q: registry %s refused the operator's credentials for it (check them in the registry credentials file): %s: %w", ref, host, msg, sandbox.ErrImageUnavailable)
	case denied:
		return fmt.Errorf("image %q: registry %s wants credentials, and the operator has none for it (add %s to the registry credentials file): %s: %w", ref, host, host, msg, sandbox.ErrImageUnavailable)
	}
	return fmt.Errorf("image %q: the pull from %s failed: %s: %w", ref, host, msg, sandbox.ErrImageUnavailable)
}
