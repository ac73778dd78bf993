// Package runpage shows a run to people at GET /runs/{id}: the prompt
// (the issue), each model turn with its tool calls and results, every
// command with its exit code and duration, edits as diffs, checks, new
// tests and findings as tables, setup, refusals, secrets' names,
// services and compactions (every ledger event type, events.go), the
// verification table (baseline against final), the pull-request body
// with the tokens and the cost estimate, from the record jobs/runstore
// keeps in Redis. While the run goes on the page reloads itself. Page
// renders the same page for a file: patchwright run writes it as
// run.html beside the run's other files.
//
// Who may look: links are signed. Each link carries an expiry and an
// HMAC-SHA256 over the run ID and that expiry, under a key derived from
// the app's private key, which every serve and worker process has and
// nobody else does. Patchwright posts the link only where GitHub shows it
// to people who can see the repository (the status comment, the check
// runs, the pull-request body), so holding a valid link is taken as
// having been shown it there. This was chosen over GitHub login with a
// repository access check because it needs no OAuth app, callback or
// session store and works the same on GitHub Enterprise; its cost is that
// a forwarded link works for whoever receives it until it expires.
// An unsigned, tampered or expired link gets the same 404 as a run that
// does not exist.
//
// Everything on the page is untrusted (issue text, model output, tool
// output): it is rendered as text by html/template, with ANSI escapes,
// other control characters and bidirectional overrides removed, and the
// page forbids scripts, images and every other subresource (CSP).
package runpage

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/jobs/runstore"
)

// DefaultLinkTTL is how long a link works: the run record's own retention.
const DefaultLinkTTL = runstore.DefaultRetention

// Signer makes and checks run links.
type Signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewSigner derives the link key from secret (the app's private key PEM:
// every serve and worker has it) and returns a Signer whose links last
// ttl (0: DefaultLinkTTL). It fails on an empty secret.
func NewSigner(secret []byte, ttl time.Duration) (*Signer, error) {
	if len(secret) == 0 {
		return nil, errors.New("runpage: no secret to sign links with")
	}
	if ttl <= 0 {
		ttl = DefaultLinkTTL
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("patchwright run links v1"))
	return &Signer{key: mac.Sum(nil), ttl: ttl, now: time.Now}, nil
}

func (s *Signer) mac(id string, exp int64) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(id + "\n" + strconv.FormatInt(exp, 10)))
	return m.Sum(nil)
}

// Link returns base/<id>?exp=…&sig=…, valid for the Signer's TTL. It fits
// githubjob.Pipeline's run links: base is PATCHWRIGHT_RUN_URL.
func (s *Signer) Link(base, id string) string {
	exp := s.now().Add(s.ttl).Unix()
	q := url.Values{"exp": {strconv.FormatInt(exp, 10)}, "sig": {hex.EncodeToString(s.mac(id, exp))}}
	return strings.TrimRight(base, "/") + "/" + url.PathEscape(id) + "?" + q.Encode()
}

// Valid reports whether exp and sig sign id and the expiry has not passed.
func (s *Signer) Valid(id, exp, sig string) bool {
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !s.now().Before(time.Unix(e, 0)) {
		return false
	}
	got, err := hex.DecodeString(sig)
	return err == nil && hmac.Equal(got, s.mac(id, e))
}

// Store is where records come from: *runstore.Store.
type Store interface {
	Get(ctx context.Context, id string) (runstore.Record, error)
}

// Handler serves GET /runs/{id}. Mount it at "GET /runs/{id}".
type Handler struct {
	Store  Store
	Signer *Signer
	// Refresh is the reload interval while a run goes on; default 10 s.
	Refresh time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// ServeHTTP renders the run, or 404 for anything it will not show.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Robots-Tag", "noindex")
	hdr.Set("Cache-Control", "private, no-store")
	id := r.PathValue("id")
	q := r.URL.Query()
	if !runstore.ValidID(id) || h.Signer == nil || !h.Signer.Valid(id, q.Get("exp"), q.Get("sig")) {
		notFound(w)
		return
	}
	rec, err := h.Store.Get(r.Context(), id)
	if errors.Is(err, runstore.ErrNotFound) {
		notFound(w)
		return
	}
	if err != nil {
		h.logger().Error("run page: load run", "run", id, logkey.Err, err)
		http.Error(w, "the run could not be loaded; try again", http.StatusServiceUnavailable)
		return
	}
	refresh := h.Refresh
	if refresh <= 0 {
		refresh = 10 * time.Second
	}
	page, err := render(rec, refresh)
	if err != nil {
		h.logger().Error("run page: render", "run", id, logkey.Err, err)
		http.Error(w, "the run could not be shown", http.StatusInternalServerError)
		return
	}
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// notFound is one answer for every refusal, so none tells a prober more.
func notFound(w http.ResponseWriter) {
	http.Error(w, "not found", http.StatusNotFound)
}
