package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/sandbox"
)

// Verifier runs the repository's verification checks (build, lint, tests)
// in the sandbox. The runner itself belongs to the verification package;
// the verify tool only calls it.
type Verifier interface {
	// Verify runs every configured check, cheapest first, and returns one
	// Check per check. The error is for infrastructure failures (a dead
	// sandbox, a cancelled context), never for a check that failed.
	Verify(ctx context.Context) ([]Check, error)
}

// Check is the outcome of one verification check. The embedded
// CommandRecord is the command as it ran; its Output holds the kept head
// and tail of the output, which the verify tool shows for a failed check.
type Check struct {
	// Name is the check's name from .github/agent.yml, for example "test".
	Name string `json:"name"`
	// Passed is true when the command ran and exited 0.
	Passed bool `json:"passed"`
	CommandRecord
}

// Limits bound what the tools return and run. Each zero field takes the
// default named in its comment.
type Limits struct {
	// MaxReadLines is the most lines read_file returns in one call;
	// default 2000.
	MaxReadLines int
	// MaxReadBytes is the most bytes of file text read_file returns in one
	// call; default 64 KiB.
	MaxReadBytes int
	// MaxListFiles is the most paths list_files returns; default 1000.
	MaxListFiles int
	// MaxSearchResults is the most matching lines search returns;
	// default 200.
	MaxSearchResults int
	// MaxSearchFileBytes: search skips larger files; default 1 MiB.
	MaxSearchFileBytes int64
	// MaxLineLength cuts longer lines in search results; default 200 bytes.
	MaxLineLength int
	// RunTimeout is a command's time limit when the model gives none;
	// default 2 minutes.
	RunTimeout time.Duration
	// MaxRunTimeout caps the timeout_s the model may ask for; default
	// 10 minutes.
	MaxRunTimeout time.Duration
	// RunOutputLimit is the bytes kept of each output stream of a command
	// (head plus tail); default 16 KiB.
	RunOutputLimit int
}

// DefaultLimits are used for every zero field of Options.Limits.
var DefaultLimits = Limits{
	MaxReadLines:       2000,
	MaxReadBytes:       64 << 10,
	MaxListFiles:       1000,
	MaxSearchResults:   200,
	MaxSearchFileBytes: 1 << 20,
	MaxLineLength:      200,
	RunTimeout:         2 * time.Minute,
	MaxRunTimeout:      10 * time.Minute,
	RunOutputLimit:     16 << 10,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	pickDur := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	l.MaxReadLines = pick(l.MaxReadLines, d.MaxReadLines)
	l.MaxReadBytes = pick(l.MaxReadBytes, d.MaxReadBytes)
	l.MaxListFiles = pick(l.MaxListFiles, d.MaxListFiles)
	l.MaxSearchResults = pick(l.MaxSearchResults, d.MaxSearchResults)
	if l.MaxSearchFileBytes <= 0 {
		l.MaxSearchFileBytes = d.MaxSearchFileBytes
	}
	l.MaxLineLength = pick(l.MaxLineLength, d.MaxLineLength)
	l.RunTimeout = pickDur(l.RunTimeout, d.RunTimeout)
	l.MaxRunTimeout = pickDur(l.MaxRunTimeout, d.MaxRunTimeout)
	if l.RunTimeout > l.MaxRunTimeout {
		l.RunTimeout = l.MaxRunTimeout
	}
	l.RunOutputLimit = pick(l.RunOutputLimit, d.RunOutputLimit)
	return l
}

// Options are the dependencies and limits of a tool Set.
type Options struct {
	// Workspace is the job's workspace; every file access goes through it.
	// Required.
	Workspace *sandbox.Workspace
	// Sandbox runs the run tool's commands. Required.
	Sandbox sandbox.Sandbox
	// Verifier runs the verify tool's checks. Required.
	Verifier Verifier
	// Protected are doublestar globs (protected_paths of
	// .github/agent.yml) of paths the model may not write or delete,
	// matched against slash-separated paths relative to the repository
	// root. Empty: nothing beyond secret paths and .git is protected.
	Protected []string
	// Limits bound outputs and commands; zero fields take DefaultLimits.
	Limits Limits
	// Secrets scans every result and command output before the model or
	// the ledger sees it; nil means secrets.Default() (gitleaks' rules).
	Secrets *secrets.Scanner
	// Dependencies runs fetch_dependencies; nil leaves that tool out.
	Dependencies DependencyFetcher
	// ReadOnly builds the planning set: list_files, read_file, search and
	// submit_plan, nothing that writes the tree or runs a command (no
	// edit, write_file, delete_file, run, verify or fetch_dependencies).
	// Sandbox and Verifier are then not needed and not used.
	ReadOnly bool
}

// files is the part of *sandbox.Workspace the tools use. It is a seam so
// that a test can make a write fail midway through an edit.
type files interface {
	Clean(name string) (string, error)
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, data []byte) error
	Remove(name string) error
	Stat(name string) (fs.FileInfo, error)
	WalkDir(name string, fn fs.WalkDirFunc) error
}

// Set is the tools of one run, sharing what the model has read. It is safe
// for concurrent use; calls that write are serialised.
type Set struct {
	fs files
	// dir is the workspace's host directory, whose owner gets what
	// write_file creates (owner.go); "" for a test's seam.
	dir       string
	secrets   *secrets.Scanner
	links     *secretFiles
	sandbox   sandbox.Sandbox
	verifier  Verifier
	deps      DependencyFetcher
	protected []string
	limits    Limits
	reads     *readState
	// writeMu serialises edit, write_file and delete_file so that the
	// check of what the model read and the write form one step.
	writeMu sync.Mutex
	tools   []Tool
	byName  map[string]Tool
}

// New builds the tools of docs/design.md §4.4 (fetch_dependencies only with
// Options.Dependencies) over the given dependencies. It
// fails when a dependency is missing or a protected glob is malformed, so
// that a typo in protected_paths never silently protects nothing.
func New(opts Options) (*Set, error) {
	if opts.Workspace == nil {
		return nil, errors.New("tools: Options.Workspace is required")
	}
	if opts.Sandbox == nil && !opts.ReadOnly {
		return nil, errors.New("tools: Options.Sandbox is required")
	}
	if opts.Verifier == nil && !opts.ReadOnly {
		return nil, errors.New("tools: Options.Verifier is required")
	}
	for _, p := range opts.Protected {
		if !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("tools: protected path %q is not a valid glob", p)
		}
	}
	if opts.Secrets == nil {
		sc, err := secrets.Default()
		if err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		opts.Secrets = sc
	}
	return newSet(opts.Workspace, opts), nil
}

func newSet(fsys files, opts Options) *Set {
	s := &Set{
		fs:        fsys,
		dir:       workspaceDir(opts.Workspace),
		secrets:   opts.Secrets,
		links:     newSecretFiles(fsys),
		sandbox:   opts.Sandbox,
		verifier:  opts.Verifier,
		deps:      opts.Dependencies,
		protected: append([]string(nil), opts.Protected...),
		limits:    opts.Limits.withDefaults(),
		reads:     newReadState(),
	}
	if opts.ReadOnly {
		// What a plan needs and nothing else: a tool that is not in the
		// set cannot be called, whatever the model sends.
		s.tools = []Tool{
			newTool("list_files", descListFiles, guarded(s, "list_files", locateIn("list_files"), s.listFiles)),
			newTool("read_file", descReadFile, guarded(s, "read_file", locateIn("read_file"), s.readFile)),
			newTool("search", descSearch, guarded(s, "search", locateSearch, s.search)),
			newTool("submit_plan", descSubmitPlan, guarded(s, "submit_plan", locateIn("submit_plan"), s.submitPlan)),
		}
		s.index()
		return s
	}
	s.tools = []Tool{
		newTool("list_files", descListFiles, guarded(s, "list_files", locateIn("list_files"), s.listFiles)),
		newTool("read_file", descReadFile, guarded(s, "read_file", locateIn("read_file"), s.readFile)),
		newTool("search", descSearch, guarded(s, "search", locateSearch, s.search)),
		newTool("edit", descEdit, guarded(s, "edit", locateIn("edit"), s.edit)),
		newTool("write_file", descWriteFile, guarded(s, "write_file", locateIn("write_file"), s.writeFile)),
		newTool("delete_file", descDeleteFile, guarded(s, "delete_file", locateIn("delete_file"), s.deleteFile)),
		newTool("run", descRun, guarded(s, "run", locateIn("run"), afterCommands(s, s.run))),
		newTool("verify", descVerify, guarded(s, "verify", locateIn("verify"), afterCommands(s, s.verify))),
	}
	if s.deps != nil {
		// Before finish: the order of docs/design.md §4.4, fetch_dependencies
		// beside verify.
		s.tools = append(s.tools, newTool("fetch_dependencies", descFetchDependencies,
			guarded(s, "fetch_dependencies", locateIn("fetch_dependencies"), afterCommands(s, s.fetchDependencies))))
	}
	s.tools = append(s.tools, newTool("finish", descFinish, guarded(s, "finish", locateIn("finish"), s.finish)))
	s.index()
	return s
}

func (s *Set) index() {
	s.byName = make(map[string]Tool, len(s.tools))
	for _, t := range s.tools {
		s.byName[t.Name()] = t
	}
}

// Lookup returns the tool with the given name.
func (s *Set) Lookup(name string) (Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Tools returns the tools in the order of docs/design.md §4.4. The order is fixed
// so the prompt prefix stays cacheable.
func (s *Set) Tools() []Tool { return append([]Tool(nil), s.tools...) }

// Definition describes a tool to a model. Its fields match
// provider.ToolDef, so a conversion provider.ToolDef(d) is enough.
type Definition struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Definitions returns the definitions of all tools, in the order of Tools.
func (s *Set) Definitions() []Definition {
	defs := make([]Definition, len(s.tools))
	for i, t := range s.tools {
		defs[i] = Definition{Name: t.Name(), Description: t.Description(), Schema: t.Schema()}
	}
	return defs
}

func workspaceDir(ws *sandbox.Workspace) string {
	if ws == nil {
		return ""
	}
	return ws.Dir()
}
