package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version and buildDate may be set by a release build:
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.buildDate=2026-12-06T08:00:00Z" ./cmd/patchwright
//
// Left empty, they come from the build information the go command
// records: the main module's version (a tag, or a pseudo-version from the
// commit) and the commit's time.
var version, buildDate string

// buildInfo is what `patchwright version` prints, /metrics exports and
// result.json carries.
type buildInfo struct {
	// Version is the release (-ldflags), else the main module's version,
	// else "dev" (a binary built without module information, a test).
	Version string
	// Commit is vcs.revision, with "-modified" when the working tree had
	// uncommitted changes; "unknown" when the build did not record it
	// (go build -buildvcs=false, or outside a repository).
	Commit string
	// Date is the build date a release gave (-ldflags), else the commit's
	// time (vcs.time): the go command does not record when it built.
	Date string
	// GoVersion is the toolchain's, e.g. go1.26.8.
	GoVersion string
}

// currentBuild is this binary's buildInfo.
func currentBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return readBuild(bi, version, buildDate)
}

// readBuild reads bi (nil: none recorded), overridden by a release's
// version and date when they are set.
func readBuild(bi *debug.BuildInfo, release, date string) buildInfo {
	b := buildInfo{Version: "dev", Commit: "unknown", Date: "unknown", GoVersion: "unknown"}
	if bi != nil {
		b.GoVersion = bi.GoVersion
		// "(devel)" is what a build without version control or module
		// version says: no better than dev.
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			b.Version = v
		}
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.time":
				b.Date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && b.Commit != "unknown" {
			b.Commit += "-modified"
		}
	}
	if release != "" {
		b.Version = release
	}
	if date != "" {
		b.Date = date
	}
	return b
}

// String is the one-line form result.json and logs carry.
func (b buildInfo) String() string {
	return b.Version + " (commit " + b.Commit + ")"
}

// print writes `patchwright version`'s answer.
func (b buildInfo) print(w io.Writer) {
	fmt.Fprintf(w, "patchwright %s\ncommit: %s\ndate:   %s\ngo:     %s\n", b.Version, b.Commit, b.Date, b.GoVersion)
}
