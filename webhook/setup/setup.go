// Package setup registers Patchwright as a GitHub App with GitHub's
// manifest flow, so an operator never fills GitHub's form by hand.
//
// `serve` without app credentials runs in setup mode. It makes a one-time
// code, prints it to its log and writes it to CodeFile in the data
// directory (code.go); GET /setup asks for that code, and only a POST of the
// right code shows the button that posts app.yml, with this server's webhook and callback URLs
// filled in, to GitHub (for the operator's account or an organisation; a
// GitHub Enterprise host through Config.WebURL and Config.APIURL). GitHub
// creates the app and sends the browser back to GET /setup/callback with a
// one-hour code and the state this server issued. The callback checks the
// state (one use, one hour), exchanges the code for the app's ID, private
// key and webhook secret (POST /app-manifests/{code}/conversions), stores
// them under the data directory (see Load) and shows the next step:
// install the app on repositories. From then on both pages answer 404.
//
// Whoever completes the flow first owns this server's app identity, which
// is why the flow starts only with the code: reading the server's log or
// its data directory is what makes someone the operator.
package setup

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/internal/logkey"
	"go.yaml.in/yaml/v3"
)

//go:embed app.yml
var manifestFS embed.FS

// Defaults for github.com.
const (
	DefaultWebURL = "https://github.com"
	DefaultAPIURL = "https://api.github.com/"
	// StateTTL is how long an issued state is accepted: GitHub's code
	// itself expires after an hour.
	StateTTL = time.Hour
	// maxStates bounds the states kept for pages nobody finished: the
	// page is unauthenticated, so each visit must not cost memory forever.
	maxStates = 256
)

// Config configures a Handler.
type Config struct {
	// DataDir is where the credentials are stored (see Load); required.
	DataDir string
	// WebURL is GitHub's web root, where the manifest is posted; default
	// DefaultWebURL. GitHub Enterprise Server: https://HOST.
	WebURL string
	// APIURL is GitHub's REST root for the code exchange; default
	// DefaultAPIURL. GitHub Enterprise Server: https://HOST/api/v3/.
	APIURL string
	// PublicURL is this server's address as GitHub and browsers reach it,
	// e.g. https://patchwright.example.com. Empty: derived from each
	// request (its Host, and X-Forwarded-Proto from a proxy), and shown
	// on the page so the operator can check it.
	PublicURL string
	// HTTPClient makes the code exchange; default http.DefaultClient.
	HTTPClient *http.Client
	// OnConfigured is called once the credentials are stored, so the
	// caller can leave setup mode; optional.
	OnConfigured func(Credentials)
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Now is the clock for state expiry; default time.Now.
	Now func() time.Time
}

// Handler serves GET /setup and GET /setup/callback. It is safe for
// concurrent use.
type Handler struct {
	cfg      Config
	manifest map[string]any
	gh       *github.Client

	mu         sync.Mutex
	states     map[string]time.Time // state → expiry
	configured bool
	code       string      // the one-time code; "" once configured
	failures   []time.Time // wrong codes within failureWindow
}

// New returns the setup handler. It fails without a data directory, with
// an unparsable URL, or when the embedded manifest does not decode.
func New(cfg Config) (*Handler, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("setup: no data directory")
	}
	cfg.WebURL = strings.TrimRight(cmpOr(cfg.WebURL, DefaultWebURL), "/")
	cfg.APIURL = cmpOr(cfg.APIURL, DefaultAPIURL)
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	for name, u := range map[string]string{"web": cfg.WebURL, "API": cfg.APIURL, "public": cfg.PublicURL} {
		if u == "" && name == "public" {
			continue
		}
		if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return nil, fmt.Errorf("setup: GitHub %s URL %q is not an http(s) URL", name, u)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	manifest, err := loadManifest()
	if err != nil {
		return nil, err
	}
	gh := github.NewClient(cfg.HTTPClient)
	gh.BaseURL, _ = url.Parse(cfg.APIURL)
	_, configured, err := Load(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, manifest: manifest, gh: gh, states: map[string]time.Time{}, configured: configured}
	if configured {
		// A code a crash left behind is spent too.
		if err := removeCode(cfg.DataDir); err != nil {
			cfg.Logger.Warn("setup: remove the spent one-time code", logkey.Err, err)
		}
		return h, nil
	}
	if h.code, err = newCode(); err != nil {
		return nil, fmt.Errorf("setup: make the one-time code: %w", err)
	}
	if err := writeCode(cfg.DataDir, h.code); err != nil {
		return nil, err
	}
	cfg.Logger.Warn("setup: open /setup and enter this one-time code to register the app", "code", h.code, "code_file", CodePath(cfg.DataDir))
	return h, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Manifest returns the embedded app.yml.
func Manifest() []byte {
	b, _ := manifestFS.ReadFile("app.yml")
	return b
}

func loadManifest() (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal(Manifest(), &m); err != nil {
		return nil, fmt.Errorf("setup: app.yml: %w", err)
	}
	return m, nil
}

// Configured reports whether the flow has completed (or credentials were
// already stored when New ran).
func (h *Handler) Configured() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.configured
}

// ServeHTTP routes /setup and /setup/callback; everything else is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secureHeaders(w, h.cfg.WebURL)
	post := r.Method == http.MethodPost && r.URL.Path == "/setup"
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !post {
		w.Header().Set("Allow", "GET, HEAD")
		h.page(w, http.StatusMethodNotAllowed, "Method not allowed", "Use GET.", nil)
		return
	}
	if h.Configured() {
		h.page(w, http.StatusNotFound, "Setup is closed", "This server is already registered as a GitHub App.", nil)
		return
	}
	switch {
	case post:
		h.submitCode(w, r)
	case r.URL.Path == "/setup":
		h.askCode(w, r)
	case r.URL.Path == "/setup/callback":
		h.callback(w, r)
	default:
		http.NotFound(w, r)
	}
}

// secureHeaders: the pages hold a one-time state and, on the callback, a
// code in the URL; keep both out of caches, referrers and frames. The
// only place a form may post to is GitHub.
func secureHeaders(w http.ResponseWriter, webURL string) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "+webURL+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
}

// orgName is GitHub's rule for account names: alphanumerics and single
// hyphens, not at either end, at most 39 characters.
var orgName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)

// askCode renders the form that asks for the one-time code (and the
// organisation, if any).
func (h *Handler) askCode(w http.ResponseWriter, r *http.Request) {
	org, ok := h.org(w, r.URL.Query().Get("org"))
	if !ok {
		return
	}
	h.page(w, http.StatusOK, "Register Patchwright", "", &view{AskCode: true, Org: org, CodeFile: CodePath(h.cfg.DataDir)})
}

// maxForm bounds the code form's body: the page is unauthenticated.
const maxForm = 4 << 10

// submitCode checks the posted code and, when it is right, starts the
// manifest flow.
func (h *Handler) submitCode(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		h.page(w, http.StatusBadRequest, "Bad form", "The form could not be read.", nil)
		return
	}
	org, ok := h.org(w, r.PostForm.Get("org"))
	if !ok {
		return
	}
	right, err := h.checkCode(r.PostForm.Get("code"))
	if err != nil {
		h.cfg.Logger.Warn("setup: too many wrong codes; the form is closed for a while", "window", failureWindow.String())
		h.page(w, http.StatusTooManyRequests, "Too many wrong codes", "The form is closed for a while; try again later with the code from the server's log.", nil)
		return
	}
	if !right {
		h.cfg.Logger.Warn("setup: wrong one-time code", "remote", r.RemoteAddr)
		h.page(w, http.StatusForbidden, "Wrong code", "That is not this server's one-time code.", &view{AskCode: true, Org: org, CodeFile: CodePath(h.cfg.DataDir)})
		return
	}
	h.start(w, r, org)
}

// org checks an organisation name ("" for the operator's account); a bad
// one is answered 400.
func (h *Handler) org(w http.ResponseWriter, org string) (string, bool) {
	org = strings.TrimSpace(org)
	if org != "" && !orgName.MatchString(org) {
		h.page(w, http.StatusBadRequest, "Not an organisation name", fmt.Sprintf("%q is not a GitHub account name.", org), nil)
		return "", false
	}
	return org, true
}

// start renders the form that posts the manifest to GitHub.
func (h *Handler) start(w http.ResponseWriter, r *http.Request, org string) {
	base := h.publicURL(r)
	manifest, err := h.manifestJSON(base)
	if err != nil {
		h.cfg.Logger.Error("setup: encode manifest", logkey.Err, err)
		h.page(w, http.StatusInternalServerError, "Setup failed", "The manifest could not be encoded.", nil)
		return
	}
	state, err := h.issueState()
	if err != nil {
		h.cfg.Logger.Error("setup: issue state", logkey.Err, err)
		h.page(w, http.StatusInternalServerError, "Setup failed", "No random state could be made.", nil)
		return
	}
	action := h.cfg.WebURL + "/settings/apps/new"
	if org != "" {
		action = h.cfg.WebURL + "/organizations/" + url.PathEscape(org) + "/settings/apps/new"
	}
	action += "?state=" + url.QueryEscape(state)
	h.page(w, http.StatusOK, "Register Patchwright", "", &view{
		Action: action, Manifest: string(manifest), Org: org, WebURL: h.cfg.WebURL,
		Webhook: base + "/webhook", Callback: base + "/setup/callback",
	})
}

// publicURL is Config.PublicURL or the request's own origin.
func (h *Handler) publicURL(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return h.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

// manifestJSON is app.yml with this server's URLs filled in, as GitHub's
// form field `manifest` wants it.
func (h *Handler) manifestJSON(base string) ([]byte, error) {
	m := make(map[string]any, len(h.manifest)+1)
	for k, v := range h.manifest {
		m[k] = v
	}
	hook := map[string]any{"active": true}
	if old, ok := m["hook_attributes"].(map[string]any); ok {
		for k, v := range old {
			hook[k] = v
		}
	}
	hook["url"] = base + "/webhook"
	m["hook_attributes"] = hook
	m["redirect_url"] = base + "/setup/callback"
	return json.Marshal(m)
}

// issueState returns a new one-time state, dropping expired ones and, when
// too many pages were left unfinished, the oldest.
func (h *Handler) issueState() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	state := base64.RawURLEncoding.EncodeToString(b)
	now := h.cfg.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for s, exp := range h.states {
		if !now.Before(exp) {
			delete(h.states, s)
		}
	}
	for len(h.states) >= maxStates {
		var oldest string
		for s, exp := range h.states {
			if oldest == "" || exp.Before(h.states[oldest]) {
				oldest = s
			}
		}
		delete(h.states, oldest)
	}
	h.states[state] = now.Add(StateTTL)
	return state, nil
}

// takeState consumes state: true only for a state this server issued, once,
// within StateTTL.
func (h *Handler) takeState(state string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	exp, ok := h.states[state]
	delete(h.states, state)
	return ok && h.cfg.Now().Before(exp)
}

// codePattern: GitHub's codes are hex; the code goes into the request
// path, so nothing else may pass.
var codePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

func (h *Handler) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !h.takeState(q.Get("state")) {
		h.page(w, http.StatusBadRequest, "Unknown or expired state",
			"This link was not issued by this server, was used already, or is more than an hour old.", restart)
		return
	}
	code := q.Get("code")
	if !codePattern.MatchString(code) {
		h.page(w, http.StatusBadRequest, "No code", "GitHub's answer carries no valid code.", restart)
		return
	}
	creds, err := h.exchange(r.Context(), code)
	var gerr *github.ErrorResponse
	switch {
	case errors.As(err, &gerr) && gerr.Response != nil &&
		(gerr.Response.StatusCode == http.StatusNotFound || gerr.Response.StatusCode == http.StatusUnprocessableEntity):
		h.cfg.Logger.Warn("setup: GitHub refused the code", "status", gerr.Response.StatusCode, logkey.Err, err)
		h.page(w, http.StatusBadRequest, "The code expired",
			"GitHub no longer accepts this code: codes last an hour and work once. The app may exist on GitHub already; delete it there or start again with another name.", restart)
		return
	case err != nil:
		h.cfg.Logger.Error("setup: exchange the manifest code", logkey.Err, err)
		h.page(w, http.StatusBadGateway, "GitHub did not answer", "The code could not be exchanged: "+err.Error(), restart)
		return
	}
	if err := h.store(creds); err != nil {
		h.cfg.Logger.Error("setup: store credentials", logkey.Err, err)
		status := http.StatusInternalServerError
		if errors.Is(err, ErrConfigured) {
			status = http.StatusConflict
		}
		h.page(w, status, "Credentials not stored", err.Error(), nil)
		return
	}
	h.cfg.Logger.Info("setup: app registered", "app_id", creds.AppID, "slug", creds.Slug)
	h.page(w, http.StatusOK, "Patchwright is registered", "", &view{
		Slug: creds.Slug, AppID: creds.AppID, Install: strings.TrimRight(creds.HTMLURL, "/") + "/installations/new",
		KeyPath: KeyPath(h.cfg.DataDir),
	})
}

// exchange trades the code for the app's credentials.
func (h *Handler) exchange(ctx context.Context, code string) (Credentials, error) {
	app, _, err := h.gh.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		return Credentials{}, err
	}
	c := Credentials{
		AppID: app.GetID(), Slug: app.GetSlug(), HTMLURL: app.GetHTMLURL(),
		WebhookSecret: app.GetWebhookSecret(), PrivateKey: []byte(app.GetPEM()),
	}
	if c.AppID <= 0 || c.WebhookSecret == "" || len(c.PrivateKey) == 0 || c.Slug == "" {
		return Credentials{}, errors.New("GitHub's answer lacks the app ID, slug, webhook secret or private key")
	}
	if c.HTMLURL == "" {
		c.HTMLURL = h.cfg.WebURL + "/apps/" + url.PathEscape(c.Slug)
	}
	return c, nil
}

// store saves the credentials once and leaves setup mode.
func (h *Handler) store(c Credentials) error {
	h.mu.Lock()
	if h.configured {
		h.mu.Unlock()
		return ErrConfigured
	}
	err := save(h.cfg.DataDir, c)
	if err == nil {
		h.configured = true
		// The code is spent: registering was all it was for.
		h.code = ""
		if rerr := removeCode(h.cfg.DataDir); rerr != nil {
			h.cfg.Logger.Warn("setup: remove the spent one-time code", logkey.Err, rerr)
		}
	}
	h.mu.Unlock()
	if err == nil && h.cfg.OnConfigured != nil {
		h.cfg.OnConfigured(c)
	}
	return err
}

// NotConfigured is the webhook's handler in setup mode: 503, so GitHub
// shows any early delivery as failed and it can be redelivered.
func NotConfigured() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Patchwright is in setup mode: register the app at /setup", http.StatusServiceUnavailable)
	})
}

// view is what a page shows beyond its title and message: the start
// form (Action set), the next step (Install set), or a link to start again
// (Restart).
type view struct {
	AskCode                                          bool
	CodeFile                                         string
	Action, Manifest, Org, WebURL, Webhook, Callback string
	Slug, Install, KeyPath                           string
	AppID                                            int64
	Restart                                          bool
}

var restart = &view{Restart: true}

// page renders one of the pages. html/template escapes every value.
func (h *Handler) page(w http.ResponseWriter, status int, title, msg string, data *view) {
	var buf bytes.Buffer
	err := pageTemplate.Execute(&buf, struct {
		Title, Message string
		Data           *view
	}{title, msg, data})
	if err != nil {
		h.cfg.Logger.Error("setup: render page", logkey.Err, err)
		http.Error(w, title, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}code{background:#eee;padding:0 .2em}button{font-size:1em;padding:.4em 1em}</style>
</head><body>
<h1>{{.Title}}</h1>
{{with .Message}}<p>{{.}}</p>{{end}}
{{with .Data}}{{template "data" .}}{{end}}
</body></html>
{{define "data"}}
{{- if .AskCode}}
<p>Enter the one-time code this server printed to its log when it started in setup mode (also in <code>{{.CodeFile}}</code> on the server).</p>
<form method="post" action="/setup">
<p><label>Code: <input name="code" autocomplete="off" required></label></p>
<p><label>For an organisation (optional): <input name="org" value="{{.Org}}" placeholder="organisation"></label></p>
<button type="submit">Continue</button>
</form>
{{- else if .Action}}
<p>This creates a GitHub App on <code>{{.WebURL}}</code> {{if .Org}}owned by the organisation <code>{{.Org}}</code>{{else}}owned by your account{{end}}, with the permissions and events of <code>app.yml</code>. GitHub lets you change its name before creating it.</p>
<p>GitHub will send webhooks to <code>{{.Webhook}}</code> and bring you back to <code>{{.Callback}}</code>. If this is not the address GitHub reaches this server at, open this page through that address.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit">Create the GitHub App</button>
</form>
<form method="get" action="/setup">
<p><label>For an organisation instead: <input name="org" value="{{.Org}}" placeholder="organisation"></label> <button type="submit">Choose</button></p>
</form>
{{- else if .Install}}
<p>GitHub created the app <code>{{.Slug}}</code> (ID {{.AppID}}). Its private key and webhook secret are stored on this server (<code>{{.KeyPath}}</code>, readable by this server's user only).</p>
<p>Next: <a href="{{.Install}}">install the app on the repositories</a> Patchwright may work on. Then label an issue <code>agent</code>.</p>
<p>Workers read the same credentials from the shared data directory; restart them if they were waiting for it.</p>
{{- else if .Restart}}
<p><a href="/setup">Start again</a>.</p>
{{- end}}
{{end}}`))

// WebURLFor returns GitHub's web root for a REST root, so one setting
// (PATCHWRIGHT_GITHUB_API_URL) serves both: https://github.com for
// https://api.github.com/, and https://HOST for GitHub Enterprise Server's
// https://HOST/api/v3/.
func WebURLFor(apiURL string) (string, error) {
	u, err := url.Parse(apiURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("GitHub API URL %q is not an http(s) URL", apiURL)
	}
	if strings.EqualFold(u.Host, "api.github.com") {
		return DefaultWebURL, nil
	}
	return u.Scheme + "://" + u.Host, nil
}
