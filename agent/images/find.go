// Package images brings the pictures of an issue to the model: it finds
// them in the markdown, downloads those on GitHub's own hosts
// with bounded size, and re-encodes each as a PNG, so what reaches the
// model is pixels and nothing else (docs/design.md §4.3).
package images

import (
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Ref is one image an issue's text points at.
type Ref struct {
	// URL is as written, with HTML entities of an <img> tag decoded.
	URL string
}

// The two ways markdown on GitHub shows an image: ![alt](url "title")
// and <img ... src="url">. Links in code are not told apart: a fetched
// image is only ever shown as pixels, never followed further.
var (
	mdImage  = regexp.MustCompile(`!\[[^\]]*\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)`)
	htmlImg  = regexp.MustCompile(`(?is)<img\b[^>]*?\bsrc\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))`)
	entities = strings.NewReplacer("&amp;", "&", "&quot;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">")
)

// Find lists the images of texts in the order they appear, each URL
// once.
func Find(texts ...string) []Ref {
	type hit struct {
		at  int
		url string
	}
	var out []Ref
	seen := map[string]bool{}
	for _, text := range texts {
		var hits []hit
		for _, m := range mdImage.FindAllStringSubmatchIndex(text, -1) {
			hits = append(hits, hit{m[0], text[m[2]:m[3]]})
		}
		for _, m := range htmlImg.FindAllStringSubmatchIndex(text, -1) {
			for g := 4; g <= 8; g += 2 {
				if m[g] >= 0 {
					hits = append(hits, hit{m[0], entities.Replace(text[m[g]:m[g+1]])})
					break
				}
			}
		}
		slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
		for _, h := range hits {
			if h.url != "" && !seen[h.url] {
				seen[h.url] = true
				out = append(out, Ref{URL: h.url})
			}
		}
	}
	return out
}

// Hosts says which hosts are GitHub's for one installation.
type Hosts struct {
	// Web is the GitHub web root, "https://github.com" or a GitHub
	// Enterprise Server's "https://HOST"; its host gets the token.
	Web string
}

// githubAssetHosts serve attachments on GitHub.com without the token:
// their URLs carry their own signature.
var githubAssetHosts = []string{
	"user-images.githubusercontent.com",
	"private-user-images.githubusercontent.com",
	"objects.githubusercontent.com",
}

// web is the parsed web root; github.com when unset or unreadable.
func (h Hosts) web() *url.URL {
	u, err := url.Parse(h.Web)
	if err != nil || u.Host == "" {
		u, _ = url.Parse("https://github.com")
	}
	return u
}

// TokenHost reports whether u is the web host itself, the only one the
// installation token is sent to.
func (h Hosts) TokenHost(u *url.URL) bool {
	w := h.web()
	return u.Scheme == w.Scheme && strings.EqualFold(u.Host, w.Host)
}

// attachmentPaths are the web host's paths that serve attachments:
// GitHub.com's and newer Enterprise Servers' /user-attachments/, and an
// Enterprise Server's older /storage/user/. Nothing else of the web host
// is fetched: with the installation token, a repository's raw files or
// the API would hand the model what the author cannot read.
var attachmentPaths = []string{"/user-attachments/", "/storage/user/"}

// Allowed says why u is not fetched, "" when it may be: the web host's
// attachment paths, and, for GitHub.com only, its attachment hosts over
// https. A
// URL with a user name or password is refused, and so is a path that
// is not already clean ("..", ".", "//", a backslash): a server that
// cleans it would serve another path than the one checked.
func (h Hosts) Allowed(u *url.URL) string {
	if u.User != nil {
		return "the URL carries a user name or password"
	}
	if h.TokenHost(u) {
		if !cleanPath(u.Path) || !slices.ContainsFunc(attachmentPaths, func(p string) bool { return strings.HasPrefix(u.Path, p) }) {
			return "not an attachment of " + u.Host
		}
		return ""
	}
	// An Enterprise Server serves its attachments itself: GitHub.com's
	// hosts are not its, and its jobs reach nothing of GitHub.com.
	for _, a := range githubAssetHosts {
		if strings.EqualFold(h.web().Host, "github.com") && strings.EqualFold(u.Hostname(), a) {
			if u.Scheme != "https" || (u.Port() != "" && u.Port() != "443") {
				return "not an https URL on GitHub's hosts"
			}
			return ""
		}
	}
	return "host " + u.Hostname() + " is not GitHub's: images are fetched only from GitHub"
}

// cleanPath reports whether p is an absolute path that path.Clean leaves
// as it is and that holds no backslash.
func cleanPath(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) == p && !strings.Contains(p, `\`)
}
