package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// DefaultMaxImages is how many images of an issue are fetched; the rest
// are listed as dropped.
const DefaultMaxImages = 4

// fetchTimeout bounds one image's download, redirects included.
const fetchTimeout = 30 * time.Second

// maxRedirects is how many redirects one download follows.
const maxRedirects = 5

// Image is one image of the issue, fetched and re-encoded, or the reason
// it was not.
type Image struct {
	// Source is the URL as the issue wrote it.
	Source string
	// BytesIn is what was downloaded; zero when nothing was.
	BytesIn int64
	// Width and Height are the re-encoded image's, in pixels.
	Width, Height int
	// PNG is the re-encoded image; nil when Dropped is set.
	PNG []byte
	// SHA256 is PNG's digest, hex.
	SHA256 string
	// Dropped says why the image cannot be shown; "" when PNG holds it.
	Dropped string
}

// Fetcher downloads an issue's images. The zero value fetches nothing
// useful: Hosts says which hosts are GitHub's.
type Fetcher struct {
	// Client is the HTTP client underneath; nil uses
	// http.DefaultTransport. Its redirect policy is replaced by the
	// fetcher's own.
	Client *http.Client
	// Hosts names the installation's GitHub web host.
	Hosts Hosts
	// Token is the installation token, sent as a bearer token to the web
	// host only, never to any other host a redirect leads to.
	Token string
	// MaxImages, MaxBytes, MaxPixels and MaxEdge bound the work; zero
	// takes DefaultMaxImages, DefaultMaxBytes, DefaultMaxPixels and
	// DefaultMaxEdge.
	MaxImages, MaxBytes, MaxPixels, MaxEdge int
}

func (f Fetcher) withDefaults() Fetcher {
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&f.MaxImages, DefaultMaxImages)
	set(&f.MaxBytes, DefaultMaxBytes)
	set(&f.MaxPixels, DefaultMaxPixels)
	set(&f.MaxEdge, DefaultMaxEdge)
	return f
}

// Fetch downloads and re-encodes refs, in order. It never fails as a
// whole: an image that cannot be had is returned with Dropped saying
// why, and ctx ending drops the ones not yet fetched.
func (f Fetcher) Fetch(ctx context.Context, refs []Ref) []Image {
	f = f.withDefaults()
	client := f.client()
	out := make([]Image, 0, len(refs))
	for i, r := range refs {
		im := Image{Source: r.URL}
		switch {
		case i >= f.MaxImages:
			im.Dropped = fmt.Sprintf("only the first %d images of an issue are fetched", f.MaxImages)
		case ctx.Err() != nil:
			im.Dropped = "not fetched: " + ctx.Err().Error()
		default:
			im = f.one(ctx, client, r.URL)
		}
		out = append(out, im)
	}
	return out
}

// one fetches and re-encodes one image.
func (f Fetcher) one(ctx context.Context, client *http.Client, raw string) Image {
	im := Image{Source: raw}
	data, err := f.download(ctx, client, raw)
	im.BytesIn = int64(len(data))
	if err != nil {
		im.Dropped = err.Error()
		return im
	}
	png, w, h, err := Reencode(data, f.MaxPixels, f.MaxEdge)
	if err != nil {
		im.Dropped = err.Error()
		return im
	}
	sum := sha256.Sum256(png)
	im.PNG, im.Width, im.Height, im.SHA256 = png, w, h, hex.EncodeToString(sum[:])
	return im
}

// download reads one URL's body, at most MaxBytes of it.
func (f Fetcher) download(ctx context.Context, client *http.Client, raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errors.New("not an absolute URL")
	}
	if why := f.Hosts.Allowed(u); why != "" {
		return nil, errors.New(why)
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "image/*")
	f.authorize(req)
	resp, err := client.Do(req)
	if err != nil {
		// The url.Error names the URL, which a redirect may have signed:
		// only its cause is kept.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download: %s answered %s", resp.Request.URL.Host, resp.Status)
	}
	if resp.ContentLength > int64(f.MaxBytes) {
		return nil, fmt.Errorf("over the cap of %d bytes (%d)", f.MaxBytes, resp.ContentLength)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(f.MaxBytes)+1))
	if err != nil {
		return data, fmt.Errorf("download: %w", err)
	}
	if len(data) > f.MaxBytes {
		return data[:f.MaxBytes], fmt.Errorf("over the cap of %d bytes", f.MaxBytes)
	}
	return data, nil
}

// authorize sets the token on a request to the web host and removes it
// from any other.
func (f Fetcher) authorize(req *http.Request) {
	if f.Token != "" && f.Hosts.TokenHost(req.URL) {
		req.Header.Set("Authorization", "Bearer "+f.Token)
		return
	}
	req.Header.Del("Authorization")
}

// client is f.Client with the fetcher's redirect policy: only to
// GitHub's hosts, the token only to the web host.
func (f Fetcher) client() *http.Client {
	c := &http.Client{}
	if f.Client != nil {
		*c = *f.Client
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if why := f.Hosts.Allowed(req.URL); why != "" {
			return fmt.Errorf("redirected off GitHub: %s", why)
		}
		f.authorize(req)
		return nil
	}
	return c
}
