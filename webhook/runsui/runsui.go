// Package runsui serves the operator's runs dashboard (GET /runs): the
// outcome figures of agent pull requests (merge rate, merged without a
// human commit or review, time to merge, cost per merged pull request)
// above a list of runs, filterable by installation, repository, outcome
// and date, each with its cost and a link to its signed run page.
//
// It is read-only (GET pages and a GET form: nothing a cross-site request
// could change), behind the queue dashboard's password (webhook/basicauth),
// and bounded: a page reads at most MaxScan entries of one run index
// (jobs/runstore) and one HMGET of their outcomes, never every run.
// Everything shown goes through html/template: repository names and issue
// titles are whatever their authors typed.
package runsui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/patchwright/patchwright/jobs/outcomes"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/webhook/basicauth"
)

// Defaults.
const (
	// Path is where the dashboard is mounted (GET only).
	Path = "/runs"
	// PageSize is how many runs a page lists.
	PageSize = 50
	// MaxScan is how many index entries one page reads at most while
	// looking for runs that pass the outcome filter; a page that ran out
	// links to the next window.
	MaxScan = 500
	// scanWindow is one read of the index.
	scanWindow = 100
)

// Outcome filter values beyond outcomes' states.
const (
	// FilterNoPR: the run published no pull request.
	FilterNoPR = "none"
	// FilterUnchecked: the pull request has no outcome yet.
	FilterUnchecked = "unchecked"
)

// Runs is the run index; *runstore.Store is one.
type Runs interface {
	Scan(ctx context.Context, q runstore.Query) ([]runstore.Summary, int, error)
}

// Outcomes are the outcome records; *outcomes.Store is one.
type Outcomes interface {
	All(ctx context.Context) ([]outcomes.Record, int, error)
	Lookup(ctx context.Context, prs []outcomes.Record) ([]outcomes.Record, error)
}

// Config configures New.
type Config struct {
	Runs     Runs     // required
	Outcomes Outcomes // required
	// Link is the signed run page link of a run ID; required.
	Link func(id string) string
	// Password is required (basicauth.MinPasswordLength); Username
	// defaults to basicauth.DefaultUsername.
	Password, Username string
	Logger             *slog.Logger
	// Now is the clock for the date filter's defaults; default time.Now.
	Now func() time.Time
}

// Handler is the authenticated dashboard.
type Handler struct {
	cfg  Config
	next http.Handler
}

// New builds the dashboard; it fails without a password, so a server not
// given one has no dashboard.
func New(cfg Config) (*Handler, error) {
	if cfg.Runs == nil || cfg.Outcomes == nil || cfg.Link == nil {
		return nil, errors.New("runsui: Runs, Outcomes and Link are required")
	}
	guard, err := basicauth.New("Patchwright", cfg.Username, cfg.Password, "runsui: the runs dashboard")
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg}
	h.next = guard.Wrap(http.HandlerFunc(h.page))
	return h, nil
}

// ServeHTTP serves GET and HEAD after the password; nothing else.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.next.ServeHTTP(w, r) }

// filter is a page's query, parsed.
type filter struct {
	Installation int64
	Repo         string
	Outcome      string
	From, To     string // YYYY-MM-DD as given
	from, to     time.Time
	Offset       int
}

var (
	repoPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$`)
	outcomeSet  = []string{outcomes.StateMerged, outcomes.StateClosed, outcomes.StateSuperseded, outcomes.StateOpen, FilterUnchecked, FilterNoPR}
)

// parseFilter reads the query; every bad value is a one-line answer.
func parseFilter(q url.Values) (filter, error) {
	var f filter
	var err error
	if v := strings.TrimSpace(q.Get("installation")); v != "" {
		if f.Installation, err = strconv.ParseInt(v, 10, 64); err != nil || f.Installation <= 0 {
			return f, fmt.Errorf("installation %q is not an installation ID (a positive number)", v)
		}
	}
	if f.Repo = strings.TrimSpace(q.Get("repo")); f.Repo != "" && !repoPattern.MatchString(f.Repo) {
		return f, fmt.Errorf("repository %q is not owner/name", f.Repo)
	}
	if f.Outcome = q.Get("outcome"); f.Outcome != "" && !contains(outcomeSet, f.Outcome) {
		return f, fmt.Errorf("outcome %q is not one of %s", f.Outcome, strings.Join(outcomeSet, ", "))
	}
	f.From, f.To = strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	if f.from, err = parseDay(f.From, "from"); err != nil {
		return f, err
	}
	if f.to, err = parseDay(f.To, "to"); err != nil {
		return f, err
	}
	if !f.to.IsZero() {
		f.to = f.to.Add(24 * time.Hour) // "to" names a day it includes
		if !f.from.IsZero() && !f.from.Before(f.to) {
			return f, fmt.Errorf("from %s is after to %s", f.From, f.To)
		}
	}
	if v := q.Get("offset"); v != "" {
		if f.Offset, err = strconv.Atoi(v); err != nil || f.Offset < 0 || f.Offset > 1_000_000 {
			return f, fmt.Errorf("offset %q is not a page offset", v)
		}
	}
	return f, nil
}

func parseDay(v, name string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not a date such as 2026-03-01", name, v)
	}
	return t, nil
}

func contains(set []string, v string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

// key is the index f reads: the repository's when one is given (its runs
// are one installation's), else the installation's, else all.
func (f filter) key() string {
	switch {
	case f.Repo != "":
		return runstore.IndexKeyOfRepo(f.Repo)
	case f.Installation != 0:
		return runstore.IndexKeyOfInstallation(f.Installation)
	}
	return runstore.IndexAll
}

// query is f's query string at offset.
func (f filter) query(offset int) string {
	q := url.Values{}
	for k, v := range map[string]string{"repo": f.Repo, "outcome": f.Outcome, "from": f.From, "to": f.To} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Installation != 0 {
		q.Set("installation", strconv.FormatInt(f.Installation, 10))
	}
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	return q.Encode()
}
