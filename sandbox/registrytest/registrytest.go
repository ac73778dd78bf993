// Package registrytest runs an image registry in the test process for
// tests that pull images with the real Docker engine: go-containerregistry's
// in-memory registry on 127.0.0.1, which the engine reaches over plain
// HTTP (Docker treats 127.0.0.0/8 registries as insecure-allowed), with
// optional basic auth, and pushes of images the engine has, each with a
// marker layer that gives it a digest of its own.
package registrytest

import (
	"compress/gzip"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Registry is a registry serving on Host until the test ends.
type Registry struct {
	// Host is its address, 127.0.0.1:PORT, as image references name it.
	Host string
	// User and Password, when set, are the only credentials it accepts.
	User, Password string
	requests       atomic.Int64
	// blobs, once RedirectBlobs is called, is where blob downloads go.
	blobs atomic.Pointer[Blobs]
	// h is the registry, which the blobs server serves from too.
	h http.Handler
}

// Start serves a registry; with user set it answers 401 to requests
// without user and password.
func Start(t testing.TB, user, password string) *Registry {
	t.Helper()
	r := &Registry{User: user, Password: password, h: registryHandler()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if u, p, ok := req.BasicAuth(); r.User != "" && (!ok || u != r.User || p != r.Password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		if b := r.blobs.Load(); b != nil && req.Method == http.MethodGet && blobPath.MatchString(req.URL.Path) {
			http.Redirect(w, req, b.URL+req.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		r.h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// registryHandler is go-containerregistry's registry, quiet.
func registryHandler() http.Handler {
	return registry.New(registry.Logger(log.New(io.Discard, "", 0)))
}

// blobPath is the path of a blob download.
var blobPath = regexp.MustCompile(`^/v2/.+/blobs/sha256:[0-9a-f]{64}$`)

// Blobs is a server a registry sends its blob downloads to, as
// registries send them to object storage (RedirectBlobs). It serves the
// same blobs, without asking for credentials, and records the
// Authorization header of each request.
type Blobs struct {
	// URL is http://localhost:PORT.
	URL   string
	mu    sync.Mutex
	auths []string
}

// Auths are the Authorization headers the server was sent, one a
// request ("" for none).
func (b *Blobs) Auths() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.auths)
}

// RedirectBlobs makes r answer every blob download from now on with a
// redirect to a second server, named localhost where r is 127.0.0.1:
// another host, so r's credentials must not follow the redirect there.
func (r *Registry) RedirectBlobs(t testing.TB) *Blobs {
	t.Helper()
	b := &Blobs{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b.mu.Lock()
		b.auths = append(b.auths, req.Header.Get("Authorization"))
		b.mu.Unlock()
		r.h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	b.URL = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	r.blobs.Store(b)
	return b
}

// Requests counts the requests the registry was sent.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// Push pushes the engine's image local to the registry as repo:tag with
// a layer holding the file /registrytest-marker with marker in it, and
// returns the manifest digest the registry answers for repo:tag.
func (r *Registry) Push(t testing.TB, local, repo, tag, marker string) string {
	t.Helper()
	base := saved(t, local)
	layer, err := crane.Layer(map[string][]byte{"registrytest-marker": []byte(marker)})
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(r.Host+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	auth := authn.Anonymous
	if r.User != "" {
		auth = &authn.Basic{Username: r.User, Password: r.Password}
	}
	if err := remote.Write(ref, img, remote.WithAuth(auth)); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// saved is the engine's image local, as `docker save` writes it.
func saved(t testing.TB, local string) v1.Image {
	t.Helper()
	cli := Client(t)
	rc, err := cli.ImageSave(context.Background(), []string{local})
	if err != nil {
		t.Fatalf("save %s: %v", local, err)
	}
	defer rc.Close()
	path := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tag, err := name.NewTag(local)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("read the saved %s: %v", local, err)
	}
	if img, err = stored(img); err != nil {
		t.Fatalf("repack the saved %s: %v", local, err)
	}
	return img
}

// stored is img with each layer gzipped at level 0 (stored blocks): the
// registry and the engine take it as any gzipped layer, and a push of a
// few hundred megabytes does not spend minutes compressing them in Go
// under the race detector. At ggcr's default level the push of the
// public-shaped image (367 MB) was still uploading when its test's
// 10-minute timeout struck; at level 0 it took 67 s on the shared
// machine.
func stored(img v1.Image) (v1.Image, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	out := empty.Image
	for _, l := range layers {
		sl, err := tarball.LayerFromOpener(l.Uncompressed, tarball.WithCompressionLevel(gzip.NoCompression))
		if err != nil {
			return nil, err
		}
		if out, err = mutate.AppendLayers(out, sl); err != nil {
			return nil, err
		}
	}
	return mutate.ConfigFile(out, cfg)
}

// Client is a Docker client closed when the test ends.
func Client(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// RemoveImages removes from the engine, when the test ends, every image
// of the registry's repository repo that a test pulled.
func (r *Registry) RemoveImages(t testing.TB, repo string) {
	t.Helper()
	cli := Client(t)
	t.Cleanup(func() {
		ctx := context.Background()
		list, err := cli.ImageList(ctx, image.ListOptions{All: true})
		if err != nil {
			return
		}
		prefix := r.Host + "/" + repo
		for _, img := range list {
			for _, ref := range append(append([]string(nil), img.RepoTags...), img.RepoDigests...) {
				if strings.HasPrefix(ref, prefix+":") || strings.HasPrefix(ref, prefix+"@") {
					cli.ImageRemove(ctx, img.ID, image.RemoveOptions{Force: true, PruneChildren: true})
					break
				}
			}
		}
	})
}
