package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuild(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := map[string]struct {
		bi            *debug.BuildInfo
		release, date string
		want          buildInfo
	}{
		"no build information": {want: buildInfo{Version: "dev", Commit: "unknown", Date: "unknown", GoVersion: "unknown"}},
		"clean checkout": {
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261206072000-7b0fcc509bf4"},
				Settings: vcs("vcs.revision", "7b0fcc509bf4", "vcs.time", "2026-12-06T07:20:00Z", "vcs.modified", "false")},
			want: buildInfo{Version: "v0.0.0-20261206072000-7b0fcc509bf4", Commit: "7b0fcc509bf4", Date: "2026-12-06T07:20:00Z", GoVersion: "go1.26.8"},
		},
		"uncommitted changes": {
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "abc", "vcs.modified", "true")},
			want: buildInfo{Version: "dev", Commit: "abc-modified", Date: "unknown", GoVersion: "go1.26.8"},
		},
		"release flags win": {
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-x"}, Settings: vcs("vcs.revision", "abc", "vcs.time", "2026-01-01T00:00:00Z")},
			release: "v1.2.0", date: "2026-12-06T08:00:00Z",
			want: buildInfo{Version: "v1.2.0", Commit: "abc", Date: "2026-12-06T08:00:00Z", GoVersion: "go1.26.8"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := readBuild(tc.bi, tc.release, tc.date); got != tc.want {
				t.Fatalf("readBuild = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestVersionCommand: `version`, `--version` and `-version` answer the
// same, from this binary's build information; extra arguments are refused.
func TestVersionCommand(t *testing.T) {
	var want bytes.Buffer
	currentBuild().print(&want)
	if !strings.HasPrefix(want.String(), "patchwright ") || !strings.Contains(want.String(), "\ngo:     go1.") {
		t.Fatalf("version text %q", want.String())
	}
	for _, arg := range []string{"version", "--version", "-version"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{arg}, &stdout, &stderr); code != 0 || stdout.String() != want.String() {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and %q", arg, code, stdout.String(), stderr.String(), want.String())
		}
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"version", "x"}, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "takes no arguments") {
		t.Errorf("version x: exit %d, stderr %q", code, stderr.String())
	}
}

// TestVersionOfABuiltBinary builds the command as a user would, in this
// repository, and checks that --version prints what the go command
// recorded in the binary (go version -m): the module version, the
// commit, whether the tree was modified and the commit's time.
func TestVersionOfABuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "patchwright")
	// -buildvcs=true wins over a GOFLAGS that turns stamping off.
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	recorded := map[string]string{}
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			recorded["version"] = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				recorded[k] = v
			}
		}
	}
	// The go command records no commit in a git worktree (its .git is a
	// file, which it does not take for a repository's root), nor with
	// -buildvcs=false: then the answer is "unknown".
	commit, date := cmp.Or(recorded["vcs.revision"], "unknown"), cmp.Or(recorded["vcs.time"], "unknown")
	if commit == "unknown" {
		t.Logf("the go command recorded no commit here:\n%s", meta)
	}
	if recorded["vcs.modified"] == "true" {
		commit += "-modified"
	}
	version := recorded["version"]
	if version == "(devel)" {
		version = "dev"
	}
	goVersion := strings.Fields(string(meta))[1]
	want := fmt.Sprintf("patchwright %s\ncommit: %s\ndate:   %s\ngo:     %s\n", version, commit, date, goVersion)
	got, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("patchwright --version: %v", err)
	}
	if string(got) != want {
		t.Fatalf("patchwright --version printed\n%s\nwant, from go version -m:\n%s", got, want)
	}
}

// TestBuildInfoMetric: every process's /metrics names its build.
func TestBuildInfoMetric(t *testing.T) {
	_, reg := newMetrics()
	b := currentBuild()
	wantMetrics(t, scrapeText(t, reg), fmt.Sprintf(`patchwright_build_info{commit=%q,goversion=%q,version=%q} 1`, b.Commit, b.GoVersion, b.Version))
}
