package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// newWorkspace returns a workspace holding a small tree and the escapes a
// hostile command could plant.
func newWorkspace(t *testing.T) (*Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"main.go":          "package main\n",
		"pkg/a.go":         "package pkg\n",
		".env":             "TOKEN=secret\n",
		"config/prod.pem":  "-----BEGIN-----\n",
		".git/config":      "[core]\n",
		"docs/credentials": "x\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"etc":        "/etc",
		"passwd":     "/etc/passwd",
		"up":         "../../../../../../../../etc/passwd",
		"pkg/inside": "../main.go",
		"loop":       "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

func TestWorkspaceReadFile(t *testing.T) {
	w, _ := newWorkspace(t)
	tests := map[string]struct {
		name    string
		want    string
		wantErr error
	}{
		"regular file":              {name: "main.go", want: "package main\n"},
		"nested":                    {name: "pkg/a.go", want: "package pkg\n"},
		"cleaned":                   {name: "pkg/../main.go", want: "package main\n"},
		"symlink inside":            {name: "pkg/inside", want: "package main\n"},
		"symlink to /etc dir":       {name: "etc/passwd", wantErr: ErrPathDenied},
		"symlink to /etc/passwd":    {name: "passwd", wantErr: ErrPathDenied},
		"relative symlink climbing": {name: "up", wantErr: ErrPathDenied},
		"dot dot":                   {name: "../../etc/passwd", wantErr: ErrPathDenied},
		"absolute":                  {name: "/etc/passwd", wantErr: ErrPathDenied},
		".env":                      {name: ".env", wantErr: ErrPathDenied},
		".env.local":                {name: "sub/.env.local", wantErr: ErrPathDenied},
		"pem":                       {name: "config/prod.pem", wantErr: ErrPathDenied},
		"credentials":               {name: "docs/credentials", wantErr: ErrPathDenied},
		".git":                      {name: ".git/config", wantErr: ErrPathDenied},
		"fifo":                      {name: "fifo", wantErr: ErrNotRegular},
		"directory":                 {name: "pkg", wantErr: ErrNotRegular},
		"missing":                   {name: "nope.go", wantErr: fs.ErrNotExist},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := w.ReadFile(tt.name)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ReadFile(%q) = %q, %v; want %v", tt.name, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("ReadFile(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
			}
		})
	}
}

func TestWorkspaceSymlinkLoop(t *testing.T) {
	w, _ := newWorkspace(t)
	if _, err := w.ReadFile("loop"); err == nil {
		t.Fatal("ReadFile of a symlink loop succeeded")
	}
}

func TestWorkspaceReadTooLarge(t *testing.T) {
	w, dir := newWorkspace(t)
	w.MaxRead = 10
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), make([]byte, 11), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.txt"), make([]byte, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReadFile("big.txt"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile(big.txt) = %v, want ErrTooLarge", err)
	}
	if got, err := w.ReadFile("ok.txt"); err != nil || len(got) != 10 {
		t.Fatalf("ReadFile(ok.txt) = %d bytes, %v", len(got), err)
	}
}

func TestWorkspaceWriteFile(t *testing.T) {
	w, dir := newWorkspace(t)
	tests := map[string]struct {
		name    string
		wantErr error
	}{
		"new file in new dir":     {name: "new/dir/f.go"},
		"through /etc symlink":    {name: "etc/evil", wantErr: ErrPathDenied},
		"onto /etc/passwd link":   {name: "passwd", wantErr: ErrNotRegular},
		"dot dot":                 {name: "../outside", wantErr: ErrPathDenied},
		"absolute":                {name: "/tmp/outside", wantErr: ErrPathDenied},
		"secret":                  {name: ".env", wantErr: ErrPathDenied},
		"key":                     {name: "id_rsa", wantErr: ErrPathDenied},
		".git":                    {name: ".git/hooks/pre-commit", wantErr: ErrPathDenied},
		"root":                    {name: ".", wantErr: ErrPathDenied},
		"fifo":                    {name: "fifo", wantErr: ErrNotRegular},
		"climbing symlink target": {name: "up", wantErr: ErrNotRegular},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := w.WriteFile(tt.name, []byte("x"))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("WriteFile(%q) = %v; want %v", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteFile(%q) = %v", tt.name, err)
			}
			got, err := os.ReadFile(filepath.Join(dir, tt.name))
			if err != nil || string(got) != "x" {
				t.Fatalf("after WriteFile(%q): %q, %v", tt.name, got, err)
			}
		})
	}
	if _, err := os.Stat("/etc/evil"); err == nil {
		t.Fatal("/etc/evil was created")
	}
}

func TestWorkspaceKeepsMode(t *testing.T) {
	w, dir := newWorkspace(t)
	p := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(p, []byte("old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("run.sh", []byte("new")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("mode after WriteFile: %v, %v", info.Mode(), err)
	}
}

func TestWorkspaceRemoveAndStat(t *testing.T) {
	w, dir := newWorkspace(t)
	// Removing the symlink to /etc/passwd removes the link only.
	if err := w.Remove("passwd"); err != nil {
		t.Fatalf("Remove(passwd link) = %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("/etc/passwd: %v", err)
	}
	if err := w.Remove("etc/passwd"); !errors.Is(err, ErrPathDenied) {
		t.Fatalf("Remove(etc/passwd) = %v, want ErrPathDenied", err)
	}
	if err := w.Remove("pkg"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Remove(pkg) = %v, want ErrNotRegular", err)
	}
	if err := w.Remove(".env"); !errors.Is(err, ErrPathDenied) {
		t.Fatalf("Remove(.env) = %v, want ErrPathDenied", err)
	}
	if err := w.Remove("main.go"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "main.go")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("main.go still there: %v", err)
	}
	info, err := w.Stat("etc")
	if err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Stat(etc) = %v, %v; want the symlink itself", info, err)
	}
	if _, err := w.Stat("etc/hostname"); !errors.Is(err, ErrPathDenied) {
		t.Fatalf("Stat(etc/hostname) = %v, want ErrPathDenied", err)
	}
	if _, err := w.Stat("../x"); !errors.Is(err, ErrPathDenied) {
		t.Fatalf("Stat(../x) = %v, want ErrPathDenied", err)
	}
}

func TestWorkspaceWalkDir(t *testing.T) {
	w, _ := newWorkspace(t)
	var got []string
	err := w.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", "config", "docs", "etc", "fifo", "loop", "main.go", "passwd", "pkg", "pkg/a.go", "pkg/inside", "up"}
	if !slices.Equal(got, want) {
		t.Fatalf("WalkDir listed %q\nwant %q (no secrets, no .git, symlinks not followed)", got, want)
	}
	if err := w.WalkDir("etc", func(string, fs.DirEntry, error) error { return nil }); err != nil {
		// Walking a symlink root lists the link itself, never /etc.
		t.Fatalf("WalkDir(etc) = %v", err)
	}
	var inEtc []string
	_ = w.WalkDir("etc", func(p string, d fs.DirEntry, err error) error {
		inEtc = append(inEtc, p)
		return nil
	})
	if len(inEtc) > 1 {
		t.Fatalf("WalkDir(etc) followed the symlink to /etc: %q", inEtc)
	}
	if err := w.WalkDir("../", func(string, fs.DirEntry, error) error { return nil }); !errors.Is(err, ErrPathDenied) {
		t.Fatalf("WalkDir(../) = %v, want ErrPathDenied", err)
	}
}

func TestOpenWorkspaceMissing(t *testing.T) {
	if _, err := OpenWorkspace(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("OpenWorkspace of a missing directory succeeded")
	}
}

func TestIsSecretPath(t *testing.T) {
	for p, want := range map[string]bool{
		".env": true, "a/.env.production": true, "certs/server.key": true, "id_ed25519.pub": true,
		".npmrc": true, "x/.git-credentials": true, "main.go": false, "env.go": false, "keys.go": false,
		"credentials/x.txt": true, "README.md": false,
	} {
		if got := IsSecretPath(p); got != want {
			t.Errorf("IsSecretPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestMayMatch holds isSecretName's quick test to path.Match: it may let
// a name through that the pattern does not match, never the reverse.
func TestMayMatch(t *testing.T) {
	var names []string
	for _, pat := range secretNames {
		for _, fill := range []string{"", "x", ".a.b", "*"} {
			n := strings.ReplaceAll(pat, "*", fill)
			names = append(names, n, n[1:], n[:len(n)-1], "a"+n, n+"a", strings.ToUpper(n))
		}
	}
	names = append(names, "main.go", "env.go", ".envrc", "credentials", ".pem", "id_rsa", "x.pem.go", "")
	for _, p := range newSecretPatterns(append(secretNames, "a*a", "*x*y*", "?.key", "[ab].pem")) {
		for _, name := range names {
			if ok, _ := path.Match(p.pat, name); ok && !p.mayMatch(name) {
				t.Errorf("mayMatch(%q, %q) = false, but path.Match matches", p.pat, name)
			}
		}
	}
	mayMatch := func(pat, name string) bool { return newSecretPatterns([]string{pat})[0].mayMatch(name) }
	if mayMatch("*.pem", "main.go") || mayMatch(".env.*", ".env") || mayMatch(".netrc", ".netrcx") {
		t.Error("mayMatch lets through names no pattern matches; it no longer saves any work")
	}
}
