// Package githubapi is Patchwright's thin adapter over go-github for a GitHub
// App: the app's own calls (authenticated with the app JWT) and per-
// installation clients (installation tokens minted by ghinstallation).
package githubapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v62/github"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// DefaultBaseURL is GitHub.com's REST API.
const DefaultBaseURL = "https://api.github.com/"

// App is a GitHub App client. Installation clients are made on first use and
// kept; ghinstallation refreshes their tokens. Safe for concurrent use.
type App struct {
	appTransport *ghinstallation.AppsTransport
	app          *github.Client
	baseURL      string

	mu            sync.Mutex
	installations map[int64]*github.Client
}

// NewApp returns a client for the app appID with its PEM private key.
// baseURL is the REST API root (DefaultBaseURL when empty; for GitHub
// Enterprise, https://HOST/api/v3/). base is the HTTP transport underneath
// (http.DefaultTransport when nil). Unless base is a *RetryTransport
// already, it is wrapped in one with its defaults, so every call (token
// minting included) rides out rate limits and 5xx answers.
func NewApp(appID int64, privateKeyPEM []byte, baseURL string, base http.RoundTripper) (*App, error) {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	if _, ok := base.(*RetryTransport); !ok {
		base = &RetryTransport{Base: base}
	}
	atr, err := ghinstallation.NewAppsTransport(base, appID, privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("github app %d: private key: %w", appID, err)
	}
	// ghinstallation wants the API root without the trailing slash.
	atr.BaseURL = strings.TrimRight(baseURL, "/")
	app, err := newClient(&http.Client{Transport: atr}, baseURL)
	if err != nil {
		return nil, err
	}
	return &App{appTransport: atr, app: app, baseURL: baseURL, installations: map[int64]*github.Client{}}, nil
}

// newClient uses baseURL exactly as configured (go-github's
// WithEnterpriseURLs would append api/v3/ to a test server's URL). Beside
// GitHub Enterprise Server's https://HOST/api/v3/, uploads go to
// https://HOST/api/uploads/, not to github.com's uploads host.
func newClient(hc *http.Client, baseURL string) (*github.Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("github api url %q: not an absolute URL", baseURL)
	}
	c := github.NewClient(hc)
	c.BaseURL = u
	if strings.HasSuffix(u.Path, "/api/v3/") {
		c.UploadURL = u.ResolveReference(&url.URL{Path: "../uploads/"})
	}
	return c, nil
}

// Installation returns the client acting as installation id.
func (a *App) Installation(id int64) (*github.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.installations[id]; ok {
		return c, nil
	}
	itr := ghinstallation.NewFromAppsTransport(a.appTransport, id)
	c, err := newClient(&http.Client{Transport: itr}, a.baseURL)
	if err != nil {
		return nil, err
	}
	a.installations[id] = c
	return c, nil
}

// BotLogin returns the login of the app's bot user, "<slug>[bot]", read
// from GET /app.
func (a *App) BotLogin(ctx context.Context) (string, error) {
	app, _, err := a.app.Apps.Get(ctx, "")
	if err != nil {
		return "", fmt.Errorf("get app: %w", err)
	}
	if app.GetSlug() == "" {
		return "", errors.New("get app: response has no slug")
	}
	return app.GetSlug() + "[bot]", nil
}

// Permission is a user's access to a repository as GitHub reports it.
type Permission struct {
	// Permission is the legacy level: admin, write, read or none.
	Permission string `json:"permission"`
	// RoleName is the role (admin, maintain, write, triage, read, or a
	// custom role); empty in responses from before 2021.
	RoleName string `json:"role_name"`
}

// CanWrite reports whether the permission includes write access: role
// admin, maintain or write, or (for custom roles and legacy responses
// without role_name) a legacy level of admin or write.
func (p Permission) CanWrite() bool {
	switch strings.ToLower(p.RoleName) {
	case "admin", "maintain", "write":
		return true
	}
	switch strings.ToLower(p.Permission) {
	case "admin", "write":
		return true
	}
	return false
}

// String is the role, or the legacy level when there is no role.
func (p Permission) String() string {
	if p.RoleName != "" {
		return p.RoleName
	}
	if p.Permission != "" {
		return p.Permission
	}
	return "none"
}

// Permission reads user's permission on owner/repo through installation
// inst (GET /repos/{owner}/{repo}/collaborators/{user}/permission). go-github
// v62 does not decode role_name, so this decodes the response itself.
func (a *App) Permission(ctx context.Context, repo tasks.Issue, user string) (Permission, error) {
	owner := repo.Owner
	c, err := a.Installation(repo.InstallationID)
	if err != nil {
		return Permission{}, err
	}
	path := fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", owner, repo.Repo, user)
	req, err := c.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return Permission{}, fmt.Errorf("permission of %s on %s/%s: %w", user, owner, repo.Repo, err)
	}
	var p Permission
	if _, err := c.Do(ctx, req, &p); err != nil {
		// GitHub answers 404 for a user who is not a collaborator of a
		// private repository (and for unknown users): no access.
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
			return Permission{Permission: "none"}, nil
		}
		return Permission{}, fmt.Errorf("permission of %s on %s/%s: %w", user, owner, repo.Repo, err)
	}
	return p, nil
}

// Deliveries returns one page of the app's recent webhook deliveries, newest
// first, and the cursor of the next page ("" at the end).
func (a *App) Deliveries(ctx context.Context, cursor string) ([]*github.HookDelivery, string, error) {
	ds, resp, err := a.app.Apps.ListHookDeliveries(ctx, &github.ListCursorOptions{PerPage: 100, Cursor: cursor})
	if err != nil {
		return nil, "", fmt.Errorf("list app hook deliveries: %w", err)
	}
	return ds, resp.Cursor, nil
}

// Redeliver asks GitHub to deliver delivery id again.
func (a *App) Redeliver(ctx context.Context, id int64) error {
	if _, _, err := a.app.Apps.RedeliverHookDelivery(ctx, id); err != nil {
		// GitHub answers 202 Accepted, which go-github reports as an
		// AcceptedError: the redelivery is queued.
		var accepted *github.AcceptedError
		if errors.As(err, &accepted) {
			return nil
		}
		return fmt.Errorf("redeliver hook delivery %d: %w", id, err)
	}
	return nil
}
