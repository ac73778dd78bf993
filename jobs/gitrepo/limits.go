package gitrepo

import (
	"fmt"
	"strings"
)

// Limits bound the work tree Changes reads. A model can make a tree that
// is cheap for the sandbox and ruinous for the worker (sparse files that
// read as gigabytes, directories thousands deep); past these the change
// is refused whole, as the change's failure, and nothing is committed.
type Limits struct {
	// MaxBytes bounds the sum of the changed files' bytes (what the worker
	// holds, scans and commits). Default DefaultMaxChangeBytes.
	MaxBytes int64
	// MaxDepth bounds how many directories deep a path may be. Default
	// DefaultMaxDepth.
	MaxDepth int
	// MaxPathBytes bounds a path's length. Default DefaultMaxPathBytes.
	MaxPathBytes int
	// MaxEntries bounds the files and directories of the work tree.
	// Default DefaultMaxEntries.
	MaxEntries int
}

// The defaults of Limits. 4,096 bytes is Linux's PATH_MAX for the whole
// host path; a repository path is kept well under it.
const (
	DefaultMaxChangeBytes = 256 << 20
	DefaultMaxDepth       = 100
	DefaultMaxPathBytes   = 1024
	DefaultMaxEntries     = 1_000_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxChangeBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxPathBytes <= 0 {
		l.MaxPathBytes = DefaultMaxPathBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	return l
}

func (l Limits) checkPath(p string) error {
	if len(p) > l.MaxPathBytes {
		return limitf("a path of the work tree is longer than %d bytes", l.MaxPathBytes)
	}
	if strings.Count(p, "/")+1 > l.MaxDepth {
		return limitf("the work tree is more than %d directories deep", l.MaxDepth)
	}
	return nil
}

// LimitError is a work tree past one of Limits' bounds.
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return e.Reason }

func limitf(format string, args ...any) error {
	return &LimitError{Reason: fmt.Sprintf(format, args...)}
}
