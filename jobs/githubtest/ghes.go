package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// GHESVersion is the GitHub Enterprise Server release a GHES fake says it
// is, in the X-GitHub-Enterprise-Version header of every answer and
// delivery.
const GHESVersion = "3.17.2"

// GHES is the fake shaped like GitHub Enterprise Server: one host whose
// web pages are at its root, REST under /api/v3, GraphQL at /api/graphql,
// uploads under /api/uploads, git over HTTP at /OWNER/REPO.git and Actions
// logs downloaded from the same host. Every answer carries
// X-GitHub-Enterprise-Version. A request outside that shape (github.com's
// /graphql beside the REST root, a REST path without /api/v3, a path no
// route takes) is answered 404 and listed by Strays, so a test fails on
// any request that would have gone to the wrong place.
//
// The manifest flow is served as GHES serves it: a form posted to
// /settings/apps/new (or /organizations/ORG/settings/apps/new) sends the
// browser back to the manifest's redirect_url with a one-use code, which
// POST /api/v3/app-manifests/{code}/conversions exchanges for the app's ID,
// private key (the key NewGHES was given) and a new webhook secret.
type GHES struct {
	*Server
	// Web is the web root, http://127.0.0.1:PORT (no trailing slash);
	// Server.URL is the REST root, Web + "/api/v3/".
	Web string

	git http.Handler
}

// ghes is GitHub Enterprise Server's shape.
var ghes = shape{rest: "/api/v3", graphql: "/api/graphql", logs: "/_services/pipelines/job-logs/"}

// NewGHES starts a GHES-shaped fake whose app signs with key; it closes
// when the test ends. Serve git with ServeGit.
func NewGHES(t testing.TB, key *rsa.PrivateKey) *GHES {
	t.Helper()
	g := &GHES{Server: newServer(&key.PublicKey)}
	g.appKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	hs := httptest.NewServer(g.front())
	t.Cleanup(hs.Close)
	g.Web = hs.URL
	g.URL, g.web, g.logs = hs.URL+ghes.rest+"/", hs.URL, hs.URL+ghes.logs
	return g
}

// ServeGit serves remote's repositories at Web/OWNER/REPO.git, as GHES
// serves git over HTTPS on its own host. Call it before the first clone.
func (g *GHES) ServeGit(remote *GitRemote) {
	u, _ := url.Parse(remote.URL)
	g.mu.Lock()
	g.git = httputil.NewSingleHostReverseProxy(u)
	g.mu.Unlock()
	remotes.Store(g.Web, remote)
}

// CloneURL is owner/repo's clone URL on this host.
func (g *GHES) CloneURL(owner, repo string) string {
	return g.Web + "/" + owner + "/" + repo + ".git"
}

// front routes GHES's paths: the API and log downloads to the Server's
// handler, the rest here; everything answers with the version header.
func (g *GHES) front() http.Handler {
	api := g.handler(ghes)
	mux := http.NewServeMux()
	mux.Handle(ghes.rest+"/", api)
	mux.Handle("POST "+ghes.graphql, api)
	mux.Handle("GET "+ghes.logs+"{id}", api)
	mux.HandleFunc("/api/uploads/", func(w http.ResponseWriter, r *http.Request) { fail(w, http.StatusNotFound, "Not Found") })
	mux.HandleFunc("POST /settings/apps/new", g.newApp)
	mux.HandleFunc("POST /organizations/{org}/settings/apps/new", g.newApp)
	mux.HandleFunc("/{owner}/{repo}/{rest...}", g.serveGit)
	mux.HandleFunc("/", g.stray)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-GitHub-Enterprise-Version", GHESVersion)
		if h, pattern := mux.Handler(r); pattern == ghes.rest+"/" || pattern == "POST "+ghes.graphql || strings.Contains(pattern, ghes.logs) {
			h.ServeHTTP(w, r) // the API records its own requests
			return
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rec, r)
		g.mu.Lock()
		g.requests = append(g.requests, Request{Method: r.Method, Path: r.URL.Path, Status: rec.status})
		g.mu.Unlock()
	})
}

// serveGit passes /OWNER/REPO.git/... to the git remote; any other
// two-segment path is a stray.
func (g *GHES) serveGit(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	git := g.git
	g.mu.Unlock()
	if git == nil || !strings.HasSuffix(r.PathValue("repo"), ".git") {
		g.stray(w, r)
		return
	}
	git.ServeHTTP(w, r)
}

// Manifest is an app manifest posted to the fake's registration page.
type Manifest struct {
	// Org is the organisation the app was registered for; "" for the
	// signed-in user's account.
	Org   string
	State string
	// Fields is the manifest as posted.
	Fields map[string]any
	// Code is the code handed back; Converted says it was exchanged.
	Code      string
	Converted bool
	// WebhookSecret is the secret the conversion handed out.
	WebhookSecret string
}

// HookURL is the manifest's hook_attributes.url: where deliveries go.
func (m Manifest) HookURL() string {
	h, _ := m.Fields["hook_attributes"].(map[string]any)
	u, _ := h["url"].(string)
	return u
}

// Manifests returns the manifests posted so far, oldest first.
func (s *Server) Manifests() []Manifest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Manifest, len(s.manifests))
	for i, m := range s.manifests {
		out[i] = *m
	}
	return out
}

// newApp is the registration page's form post: it checks the manifest
// as GitHub does before it shows its form, then (the user having pressed
// "Create GitHub App") sends the browser back with a code.
func (g *GHES) newApp(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(r.PostForm.Get("manifest")), &fields); err != nil {
		http.Error(w, "Invalid GitHub App configuration: the manifest is not JSON", http.StatusUnprocessableEntity)
		return
	}
	m := &Manifest{Org: r.PathValue("org"), State: r.URL.Query().Get("state"), Fields: fields}
	redirect, _ := fields["redirect_url"].(string)
	for _, problem := range []struct {
		bad  bool
		what string
	}{
		{fields["url"] == nil || fields["url"] == "", "url is missing"},
		{redirect == "", "redirect_url is missing"},
		{m.HookURL() == "", "hook_attributes.url is missing"},
		{fields["default_permissions"] == nil, "default_permissions is missing"},
	} {
		if problem.bad {
			http.Error(w, "Invalid GitHub App configuration: "+problem.what, http.StatusUnprocessableEntity)
			return
		}
	}
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	m.Code = hex.EncodeToString(b)
	g.mu.Lock()
	g.manifests = append(g.manifests, m)
	g.mu.Unlock()
	back := redirect + "?code=" + url.QueryEscape(m.Code)
	if m.State != "" {
		back += "&state=" + url.QueryEscape(m.State)
	}
	http.Redirect(w, r, back, http.StatusFound)
}

// convertManifest exchanges a code once for the app's credentials; an
// unknown or spent code is 404, as GitHub answers.
func (s *Server) convertManifest(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var m *Manifest
	for _, x := range s.manifests {
		if x.Code == r.PathValue("code") && !x.Converted {
			m = x
		}
	}
	if m == nil {
		s.mu.Unlock()
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	m.Converted, m.WebhookSecret = true, hex.EncodeToString(b)
	name, _ := m.Fields["name"].(string)
	out := map[string]any{
		"id": AppID, "slug": AppSlug, "name": name, "node_id": "A_fake", "owner": user(cmpOr(m.Org, "octocat")),
		"html_url": s.web + "/github-apps/" + AppSlug, "webhook_secret": m.WebhookSecret, "pem": string(s.appKeyPEM),
		"client_id": "Iv1.fake", "client_secret": "fake-client-secret",
		"permissions": m.Fields["default_permissions"], "events": m.Fields["default_events"],
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

// Deliver sends a webhook delivery to the hook URL of the last converted
// manifest, signed with its secret and with GHES's delivery headers, and
// returns the answer's status.
func (g *GHES) Deliver(event, delivery string, payload []byte) (int, error) {
	var m *Manifest
	for _, x := range g.Manifests() {
		if x.Converted {
			m = &x
		}
	}
	if m == nil {
		return 0, fmt.Errorf("githubtest: no app registered yet: no hook URL or secret to deliver with")
	}
	req, err := http.NewRequest(http.MethodPost, m.HookURL(), bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	u, _ := url.Parse(g.Web)
	for k, v := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/ghes", "X-GitHub-Event": event,
		"X-GitHub-Delivery": delivery, "X-GitHub-Enterprise-Version": GHESVersion, "X-GitHub-Enterprise-Host": u.Host,
		"X-GitHub-Hook-Installation-Target-Type": "integration", "X-Hub-Signature-256": signature(m.WebhookSecret, payload),
	} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Stray is a request outside the fake's shape: no route took it.
type Stray = Request

// stray answers a request no route takes, and records it.
func (s *Server) stray(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.strays = append(s.strays, Request{Method: r.Method, Path: r.URL.Path, Status: http.StatusNotFound})
	s.mu.Unlock()
	fail(w, http.StatusNotFound, "Not Found: "+html.EscapeString(r.URL.Path)+" is not an endpoint of this fake")
}

// Strays returns the requests no route took, oldest first: for a GHES
// fake, requests that a real GHES would not have answered there.
func (s *Server) Strays() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.strays...)
}

// signature is GitHub's X-Hub-Signature-256 of payload under secret.
func signature(secret string, payload []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(payload)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
