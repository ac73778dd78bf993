// Package queueui serves asynq's queue dashboard (github.com/hibiken/asynqmon,
// whose web UI ships in its module) behind HTTP basic authentication.
//
// There is no open mode: without an operator-set password (checked by
// webhook/basicauth, which also guards the runs dashboard) there is no
// /queue at all.
//
// Browsers attach basic credentials to cross-site requests too, so
// requests that change state (the dashboard can pause queues and delete,
// run or archive tasks) are refused unless they come from the dashboard's
// own origin (net/http's CrossOriginProtection).
package queueui

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"

	"github.com/patchwright/patchwright/webhook/basicauth"
)

// Defaults.
const (
	// DefaultPath is where the dashboard is mounted.
	DefaultPath = "/queue"
	// DefaultUsername is the basic-auth user name when Config.Username is
	// empty.
	DefaultUsername = basicauth.DefaultUsername
	// MinPasswordLength refuses passwords short enough to guess online.
	MinPasswordLength = basicauth.MinPasswordLength
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
	ui   *asynqmon.HTTPHandler
	next http.Handler
}

// New builds the dashboard. It fails without Redis or without a password
// of at least MinPasswordLength bytes.
func New(cfg Config) (*Handler, error) {
	if cfg.Redis == nil {
		return nil, errors.New("queueui: no Redis")
	}
	guard, err := basicauth.New("Patchwright queue", cfg.Username, cfg.Password, "queueui: /queue")
	if err != nil {
		return nil, err
	}
	if cfg.Path == "" {
		cfg.Path = DefaultPath
	}
	if !strings.HasPrefix(cfg.Path, "/") || strings.HasSuffix(cfg.Path, "/") {
		return nil, errors.New("queueui: Path must start with / and not end with one")
	}
	ui := asynqmon.New(asynqmon.Options{RootPath: cfg.Path, RedisConnOpt: cfg.Redis, ReadOnly: cfg.ReadOnly})
	return &Handler{ui: ui, next: guard.Wrap(http.NewCrossOriginProtection().Handler(ui))}, nil
}

// ServeHTTP answers 401 to a request without the right credentials and
// hands the rest to the dashboard.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.next.ServeHTTP(w, r) }

// Close closes the dashboard's Redis connections.
func (h *Handler) Close() error { return h.ui.Close() }
