// Package queueui serves asynq's queue dashboard (github.com/hibiken/asynqmon,
// whose web UI ships in its module) behind HTTP basic authentication.
//
// There is no open mode: New refuses to build the handler without an
// operator-set password, so a server that was not given one has no /queue
// at all. Basic authentication was chosen over a login page or GitHub
// OAuth because the dashboard is an operator's tool, not a page for
// repository users: one secret in the deployment's Secret, checked in
// constant time, and nothing to store. Serve it over HTTPS only (a TLS
// terminating proxy or ingress): basic credentials travel with every
// request.
//
// Browsers attach basic credentials to cross-site requests too, so
// requests that change state (the dashboard can pause queues and delete,
// run or archive tasks) are refused unless they come from the dashboard's
// own origin (net/http's CrossOriginProtection).
package queueui

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
)

// Defaults.
const (
	// DefaultPath is where the dashboard is mounted.
	DefaultPath = "/queue"
	// DefaultUsername is the basic-auth user name when Config.Username is
	// empty.
	DefaultUsername = "operator"
	// MinPasswordLength refuses passwords short enough to guess online.
	MinPasswordLength = 16
)

// Config configures New.
type Config struct {
	// Redis is the queue's Redis (asynq.ParseRedisURI of
	// PATCHWRIGHT_REDIS_URL, or asynq.RedisClientOpt for the embedded
	// one); required. The dashboard opens its own connections.
	Redis asynq.RedisConnOpt
	// Password is required, at least MinPasswordLength bytes.
	Password string
	// Username; default DefaultUsername.
	Username string
	// Path is the mount point; default DefaultPath. Mount the handler at
	// Path+"/" on a ServeMux.
	Path string
	// ReadOnly hides the dashboard's buttons that change the queue and
	// refuses its API calls that would.
	ReadOnly bool
}

// Handler is the authenticated dashboard.
type Handler struct {
	ui         *asynqmon.HTTPHandler
	next       http.Handler
	user, pass [sha256.Size]byte
}

// New builds the dashboard. It fails without Redis or without a password
// of at least MinPasswordLength bytes.
func New(cfg Config) (*Handler, error) {
	if cfg.Redis == nil {
		return nil, errors.New("queueui: no Redis")
	}
	if len(cfg.Password) < MinPasswordLength {
		return nil, errors.New("queueui: the queue dashboard needs a password of at least 16 characters (PATCHWRIGHT_QUEUE_PASSWORD); without one /queue is not served")
	}
	if cfg.Username == "" {
		cfg.Username = DefaultUsername
	}
	if cfg.Path == "" {
		cfg.Path = DefaultPath
	}
	if !strings.HasPrefix(cfg.Path, "/") || strings.HasSuffix(cfg.Path, "/") {
		return nil, errors.New("queueui: Path must start with / and not end with one")
	}
	ui := asynqmon.New(asynqmon.Options{RootPath: cfg.Path, RedisConnOpt: cfg.Redis, ReadOnly: cfg.ReadOnly})
	h := &Handler{
		ui:   ui,
		next: http.NewCrossOriginProtection().Handler(ui),
		user: sha256.Sum256([]byte(cfg.Username)),
		pass: sha256.Sum256([]byte(cfg.Password)),
	}
	return h, nil
}

// ServeHTTP answers 401 to a request without the right credentials and
// hands the rest to the dashboard.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="Patchwright queue", charset="UTF-8"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	h.next.ServeHTTP(w, r)
}

// authorized compares hashes, so neither the comparison's time nor its
// length tells anything about the secret.
func (h *Handler) authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u := sha256.Sum256([]byte(user))
	p := sha256.Sum256([]byte(pass))
	// Both compared, always: no early exit on a wrong user name.
	return subtle.ConstantTimeCompare(u[:], h.user[:])&subtle.ConstantTimeCompare(p[:], h.pass[:]) == 1
}

// Close closes the dashboard's Redis connections.
func (h *Handler) Close() error { return h.ui.Close() }
