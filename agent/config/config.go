// Package config reads a repository's .github/agent.yml (docs/design.md §4.3).
// It is strict: an unknown key, a value of the wrong type or an invalid
// value is an error that names the key and its line, so the maintainer
// learns about a typo instead of having it ignored.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/egress"
)

// Path is where the configuration lives in a repository.
const Path = ".github/agent.yml"

// Defaults of the keys of docs/design.md §4.3.
const (
	DefaultSetupNetwork = true
	DefaultMaxSteps     = 40
	// DefaultMergeSteps is limits.merge_steps when unset.
	DefaultMergeSteps     = 15
	DefaultMaxMinutes     = 30
	DefaultMaxInputTokens = 2_000_000
	// DefaultMaxChangedFiles and DefaultMaxChangedLines bound a change
	// before it earns a scope finding: past them a reviewer is asked to
	// look at its size; the change is not refused.
	DefaultMaxChangedFiles = 30
	DefaultMaxChangedLines = 1500
	DefaultDraft           = DraftAuto
	// DefaultCIFixAttempts is how many automatic attempts Patchwright
	// makes per pull request when the repository's own CI fails on the
	// head it pushed.
	DefaultCIFixAttempts = 2
	// MaxCIFixAttempts is the most ci_fix_attempts may ask for: each
	// attempt is a full model run nobody asked for by hand.
	MaxCIFixAttempts = 10
)

// Draft says when the pull request is opened as a draft.
type Draft string

// Values of the draft key.
const (
	DraftAuto   Draft = "auto"   // draft unless the outcome is verified
	DraftAlways Draft = "always" // always a draft
	DraftNever  Draft = "never"  // never a draft
)

// Config is a parsed .github/agent.yml with defaults filled in.
type Config struct {
	// Image is the sandbox image; empty means the operator's default.
	Image string `yaml:"image"`
	// Setup commands run once before the baseline.
	Setup []string `yaml:"setup"`
	// SetupNetwork gives setup a network; default DefaultSetupNetwork.
	// The agent phase never has one.
	SetupNetwork *bool `yaml:"setup_network"`
	// Egress is the `network:` key: what the setup network reaches.
	Egress Egress `yaml:"network"`
	// Services are containers started on the job's own network before
	// setup and kept until the job ends, reached by their names.
	Services []Service `yaml:"services"`
	// Verify lists the checks, cheapest first; empty means detect them.
	Verify []Check `yaml:"verify"`
	// ProtectedPaths are doublestar globs the agent may not edit.
	ProtectedPaths []string `yaml:"protected_paths"`
	// Exclude are gitignore-style patterns (agent/ignore.List) of paths
	// the model may not read or write: no tool, the repository map or the
	// instruction files show them. The checks still see them.
	Exclude []string `yaml:"exclude"`
	Limits  Limits   `yaml:"limits"`
	// Draft defaults to DefaultDraft.
	Draft Draft `yaml:"draft"`
	// CIFixAttempts bounds the automatic attempts per pull request that
	// a failure of the repository's own CI starts; nil means
	// DefaultCIFixAttempts, 0 turns them off.
	CIFixAttempts *int `yaml:"ci_fix_attempts"`
	// Review turns the review before publishing on (ReviewOn, the
	// default) or off.
	Review Review `yaml:"review"`
	// MergeConflicts is `merge_conflicts:`: "auto" (the default) merges a
	// moved default branch into an open agent pull request and checks it
	// again; "off" leaves the pull request as it is.
	MergeConflicts string `yaml:"merge_conflicts"`
	// Reviewers are GitHub logins asked to review every pull request
	// Patchwright opens, besides whoever asked for it.
	Reviewers []string `yaml:"reviewers"`
	// Schedules open a tracking issue on a cron schedule and run it as
	// if labelled; read from the default branch only (jobs/schedule).
	Schedules []Schedule `yaml:"schedules"`
	// Approval is `approval:`: "independent" keeps a check run
	// patchwright/approval pending on each agent pull request until
	// someone with write access other than whoever asked for its runs
	// approves its head; "off" (the default) posts none.
	Approval string `yaml:"approval"`
	// StaleAfterDays is `stale_after_days:`: an agent pull request
	// untouched this long is warned, then closed; 0 turns it off; nil
	// is DefaultStaleAfterDays.
	StaleAfterDays *int `yaml:"stale_after_days"`
}

// Review says whether the review before publishing runs.
type Review string

// Values of the review key.
const (
	ReviewOn  Review = "on"
	ReviewOff Review = "off"
)

// Reviewed reports whether the review before publishing runs.
func (c Config) Reviewed() bool { return c.Review != ReviewOff }

// loginRE is GitHub's rule for a user's login: letters, digits and
// single hyphens, not at either end, at most 39 characters.
var loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$`)

// Values of merge_conflicts.
const (
	MergeConflictsAuto = "auto"
	MergeConflictsOff  = "off"
)

// KeepsMergeable reports whether a moved default branch is merged into
// the repository's open agent pull requests.
func (c Config) KeepsMergeable() bool { return c.MergeConflicts != MergeConflictsOff }

// CIFixLimit is CIFixAttempts with its default.
func (c Config) CIFixLimit() int {
	if c.CIFixAttempts == nil {
		return DefaultCIFixAttempts
	}
	return *c.CIFixAttempts
}

// Egress is the `network:` key. Either the word `open` (the setup
// network reaches the internet, where the operator allows it) or
// `allowlist` (the default), or a mapping with `allow:`, host names
// the setup network reaches besides the detected ecosystems' registries
// and the operator's list ("host", "host:port", "*.domain").
type Egress struct {
	Open  bool
	Allow []string
}

// UnmarshalYAML reads the word or the mapping.
func (e *Egress) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "open":
			e.Open = true
		case "allowlist", "":
		default:
			return fmt.Errorf("line %d: network: %q is not open, allowlist or a mapping with allow", n.Line, n.Value)
		}
		return nil
	}
	var m struct {
		Allow []string `yaml:"allow"`
	}
	dec := n.Decode
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: network: want open, allowlist or a mapping with allow", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "allow" {
			return fmt.Errorf("line %d: network: unknown key %q (known keys: allow)", n.Content[i].Line, k)
		}
	}
	if err := dec(&m); err != nil {
		return err
	}
	e.Allow = m.Allow
	return nil
}

// Service is one entry of services.
type Service struct {
	// Name is the host name the job's other containers reach it by.
	Name string `yaml:"name"`
	// Image must exist on the worker's engine; nothing is pulled.
	Image string `yaml:"image"`
	// Environment is the service container's environment.
	Environment map[string]string `yaml:"environment"`
	// Health is a command and its arguments (no shell), run in the
	// service's container until it exits 0; empty: ready once started.
	Health string `yaml:"health"`
}

// serviceNameRE is a DNS label: what containers can resolve.
var serviceNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Check is one entry of verify.
type Check struct {
	Name string `yaml:"name"`
	Run  string `yaml:"run"`
}

// Limits bound a run. Zero fields take the defaults.
type Limits struct {
	MaxSteps       int   `yaml:"max_steps"`        // default DefaultMaxSteps
	MaxMinutes     int   `yaml:"max_minutes"`      // default DefaultMaxMinutes
	MaxInputTokens int64 `yaml:"max_input_tokens"` // default DefaultMaxInputTokens
	// MaxChangedFiles and MaxChangedLines (added plus deleted) are scope
	// findings, not refusals; defaults DefaultMaxChangedFiles and
	// DefaultMaxChangedLines.
	MaxChangedFiles int `yaml:"max_changed_files"`
	MaxChangedLines int `yaml:"max_changed_lines"`
	// MaxCostUSD caps one run's estimated model cost in US dollars. It
	// can only lower the operator's cap (PATCHWRIGHT_MAX_RUN_COST_USD),
	// never raise it; zero keeps the operator's.
	MaxCostUSD float64 `yaml:"max_cost_usd"`
	// MergeSteps caps the model's steps on the attempt that resolves a
	// merge conflict with a moved base (a merge is a small edit, not a
	// new change); default DefaultMergeSteps, and never above MaxSteps.
	MergeSteps int `yaml:"merge_steps"`
}

// RunCostCap is the cap a run gets: the lower of the operator's and
// the repository's, zero for neither.
func (l Limits) RunCostCap(operator float64) float64 {
	switch {
	case l.MaxCostUSD <= 0:
		return operator
	case operator <= 0:
		return l.MaxCostUSD
	}
	return min(l.MaxCostUSD, operator)
}

// Network reports whether setup runs with a network.
func (c Config) Network() bool {
	if c.SetupNetwork == nil {
		return DefaultSetupNetwork
	}
	return *c.SetupNetwork
}

// Default is the configuration of a repository without .github/agent.yml.
func Default() Config {
	c := Config{}
	c.fill()
	return c
}

func (c *Config) fill() {
	if c.SetupNetwork == nil {
		v := DefaultSetupNetwork
		c.SetupNetwork = &v
	}
	if c.Limits.MaxSteps == 0 {
		c.Limits.MaxSteps = DefaultMaxSteps
	}
	if c.Limits.MergeSteps == 0 {
		c.Limits.MergeSteps = DefaultMergeSteps
	}
	c.Limits.MergeSteps = min(c.Limits.MergeSteps, c.Limits.MaxSteps)
	if c.Limits.MaxMinutes == 0 {
		c.Limits.MaxMinutes = DefaultMaxMinutes
	}
	if c.Limits.MaxInputTokens == 0 {
		c.Limits.MaxInputTokens = DefaultMaxInputTokens
	}
	if c.Limits.MaxChangedFiles == 0 {
		c.Limits.MaxChangedFiles = DefaultMaxChangedFiles
	}
	if c.Limits.MaxChangedLines == 0 {
		c.Limits.MaxChangedLines = DefaultMaxChangedLines
	}
	if c.Draft == "" {
		c.Draft = DefaultDraft
	}
	if c.Review == "" {
		c.Review = ReviewOn
	}
	if c.CIFixAttempts == nil {
		v := DefaultCIFixAttempts
		c.CIFixAttempts = &v
	}
}

// Load reads Path from the workspace; a repository without it gets
// Default(). Read it from the default branch's checkout, never from a
// branch the issue author controls.
func Load(ws *sandbox.Workspace) (Config, error) {
	data, err := ws.ReadFile(Path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", Path, err)
	}
	return Parse(data)
}

// yaml.v3 says "line 3: field colour not found in type config.Config".
var unknownFieldRE = regexp.MustCompile(`line (\d+): field (.+) not found in type \S+`)

// Parse decodes and validates a configuration file. Errors start with the
// file name and name the offending key and line.
func Parse(data []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, decodeError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: more than one YAML document; put everything in one", Path)
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	c.fill()
	return c, nil
}

func decodeError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", Path, err)
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := unknownFieldRE.FindStringSubmatch(e); m != nil {
			msgs = append(msgs, fmt.Sprintf("line %s: unknown key %q (known keys: %s)", m[1], m[2], knownKeys))
			continue
		}
		msgs = append(msgs, e)
	}
	return fmt.Errorf("%s: %s", Path, strings.Join(msgs, "; "))
}

const knownKeys = "image, setup, setup_network, network, services, verify, protected_paths, exclude, limits, draft, ci_fix_attempts, review, merge_conflicts, reviewers, approval, stale_after_days, schedules; schedules entries: cron, title, body; services entries: name, image, environment, health; verify entries: name, run; limits: max_steps, merge_steps, max_minutes, max_input_tokens, max_changed_files, max_changed_lines, max_cost_usd"

func (c Config) validate() error {
	var errs []string
	errs = append(errs, c.verifyErrors()...)
	for i, s := range c.Setup {
		if strings.TrimSpace(s) == "" {
			errs = append(errs, fmt.Sprintf("setup[%d]: empty command", i))
		}
	}
	errs = append(errs, globErrors("protected_paths", c.ProtectedPaths)...)
	errs = append(errs, excludeErrors("exclude", c.Exclude)...)
	errs = append(errs, c.serviceErrors()...)
	errs = append(errs, c.scheduleErrors()...)
	for i, a := range c.Egress.Allow {
		if err := egress.CheckEntry(a); err != nil {
			errs = append(errs, fmt.Sprintf("network.allow[%d]: %v", i, err))
		}
	}
	l := c.Limits
	if l.MaxSteps < 0 || l.MergeSteps < 0 || l.MaxMinutes < 0 || l.MaxInputTokens < 0 || l.MaxChangedFiles < 0 || l.MaxChangedLines < 0 || l.MaxCostUSD < 0 {
		errs = append(errs, "limits: values must be positive")
	}
	if c.CIFixAttempts != nil && (*c.CIFixAttempts < 0 || *c.CIFixAttempts > MaxCIFixAttempts) {
		errs = append(errs, fmt.Sprintf("ci_fix_attempts: %d is not between 0 and %d", *c.CIFixAttempts, MaxCIFixAttempts))
	}
	switch c.Review {
	case "", ReviewOn, ReviewOff:
	default:
		errs = append(errs, fmt.Sprintf("review: %q is not one of on, off", c.Review))
	}
	for i, r := range c.Reviewers {
		if !loginRE.MatchString(r) {
			errs = append(errs, fmt.Sprintf("reviewers[%d]: %q is not a GitHub login", i, r))
		}
	}
	switch c.MergeConflicts {
	case "", MergeConflictsAuto, MergeConflictsOff:
	default:
		errs = append(errs, fmt.Sprintf("merge_conflicts: %q is not one of auto, off", c.MergeConflicts))
	}
	errs = append(errs, c.tidyErrors()...)
	switch c.Draft {
	case "", DraftAuto, DraftAlways, DraftNever:
	default:
		errs = append(errs, fmt.Sprintf("draft: %q is not one of auto, always, never", c.Draft))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s", Path, strings.Join(errs, "; "))
	}
	return nil
}

// verifyErrors checks the verify entries: each needs a name, a command,
// and a name no other entry uses.
func (c Config) verifyErrors() []string {
	var errs []string
	seen := map[string]bool{}
	for i, v := range c.Verify {
		switch {
		case strings.TrimSpace(v.Name) == "":
			errs = append(errs, fmt.Sprintf("verify[%d]: name is empty", i))
		case strings.TrimSpace(v.Run) == "":
			errs = append(errs, fmt.Sprintf("verify[%d] (%s): run is empty", i, v.Name))
		case seen[v.Name]:
			errs = append(errs, fmt.Sprintf("verify[%d]: the name %q is used twice", i, v.Name))
		}
		seen[v.Name] = true
	}
	return errs
}

// serviceErrors checks the services entries: a host-name name used once,
// an image, and environment keys that are variable names.
func (c Config) serviceErrors() []string {
	var errs []string
	names := map[string]bool{}
	for i, sv := range c.Services {
		switch {
		case !serviceNameRE.MatchString(sv.Name):
			errs = append(errs, fmt.Sprintf("services[%d]: name %q is not a host name (lower-case letters, digits and '-')", i, sv.Name))
		case names[sv.Name]:
			errs = append(errs, fmt.Sprintf("services[%d]: the name %q is used twice", i, sv.Name))
		case strings.TrimSpace(sv.Image) == "":
			errs = append(errs, fmt.Sprintf("services[%d] (%s): image is empty", i, sv.Name))
		}
		names[sv.Name] = true
		for k := range sv.Environment {
			if k == "" || strings.ContainsAny(k, "= \t\n") {
				errs = append(errs, fmt.Sprintf("services[%d] (%s): environment: %q is not a variable name", i, sv.Name, k))
			}
		}
	}
	return errs
}
