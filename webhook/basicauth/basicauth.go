// Package basicauth guards the operator's pages (/queue, /runs) with one
// HTTP basic-authentication password, the operator's
// PATCHWRIGHT_QUEUE_PASSWORD.
//
// Basic authentication was chosen over a login page or GitHub OAuth
// because these pages are an operator's tools, not pages for repository
// users: one secret in the deployment's Secret, checked in constant
// time, and nothing to store. Serve them over HTTPS only (a TLS
// terminating proxy or ingress): basic credentials travel with every
// request. There is no open mode: New refuses an empty or short
// password, so a server that was not given one serves neither page.
package basicauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
)

// Defaults.
const (
	// DefaultUsername is the user name when none is given.
	DefaultUsername = "operator"
	// MinPasswordLength refuses passwords short enough to guess online.
	MinPasswordLength = 16
)

// Guard checks one user name and password.
type Guard struct {
	realm      string
	user, pass [sha256.Size]byte
}

// New is a guard for username (DefaultUsername when empty) and password,
// which must be at least MinPasswordLength bytes; realm names the pages
// in the browser's prompt. what names the page in the error
// ("the queue dashboard", "/queue").
func New(realm, username, password, what string) (*Guard, error) {
	if len(password) < MinPasswordLength {
		return nil, fmt.Errorf("%s needs a password of at least %d characters (PATCHWRIGHT_QUEUE_PASSWORD); without one it is not served", what, MinPasswordLength)
	}
	if username == "" {
		username = DefaultUsername
	}
	return &Guard{realm: realm, user: sha256.Sum256([]byte(username)), pass: sha256.Sum256([]byte(password))}, nil
}

// Wrap answers 401 to a request without the right credentials and hands
// the rest to next, with headers that keep the pages out of caches and
// frames.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.Authorized(r) {
			w.Header().Set("WWW-Authenticate", "Basic realm="+strconv.Quote(g.realm)+`, charset="UTF-8"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// Authorized compares hashes, so neither the comparison's time nor its
// length tells anything about the secret.
func (g *Guard) Authorized(r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	u := sha256.Sum256([]byte(user))
	p := sha256.Sum256([]byte(pass))
	// Both compared, always: no early exit on a wrong user name.
	return subtle.ConstantTimeCompare(u[:], g.user[:])&subtle.ConstantTimeCompare(p[:], g.pass[:]) == 1
}
