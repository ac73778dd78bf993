package sandboxtest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// HostileEntry is one entry of the tree HostileTree builds: what a
// command in the sandbox could plant, and whether the model may see it.
type HostileEntry struct {
	Path    string
	Visible bool
	What    string // for failure messages
}

// Needle is in the content of every regular file of the hostile tree, so
// that a search for it finds each file a reader lets through.
const Needle = "needle"

// HostileTree builds in a new directory the one table of hostile entries
// that every path by which the model reads a file is held against
// (sandbox.Workspace.Visible, read_file, search, list_files, the
// instruction files, the repository map): each reader must refuse exactly
// the entries marked invisible. Entries the system cannot make (a device
// without CAP_MKNOD, a socket whose path is too long) are left out of the
// table.
func HostileTree(t testing.TB) (string, []HostileEntry) {
	t.Helper()
	dir := t.TempDir()
	outside := t.TempDir()
	var entries []HostileEntry
	add := func(p string, visible bool, what string) {
		entries = append(entries, HostileEntry{Path: p, Visible: visible, What: what})
	}
	file := func(p string) {
		t.Helper()
		full := filepath.Join(dir, p)
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte(Needle+" in "+p+"\n"), 0o644))
	}
	at := func(p string) string { return filepath.Join(dir, p) }

	file("main.go")
	add("main.go", true, "a plain file")
	file("docs/guide.md")
	add("docs/guide.md", true, "a plain file in a directory")
	must(t, os.Link(at("main.go"), at("same.go")))
	add("same.go", true, "a hard link to a plain file (both names are visible)")

	file(".env")
	add(".env", false, "a secret-bearing file")
	file("id_rsa.pub")
	add("id_rsa.pub", false, "a key file by name (id_rsa*)")
	file(".git/config")
	add(".git/config", false, "a file in .git")

	must(t, os.Symlink(".env", at("alias.txt")))
	add("alias.txt", false, "a symbolic link to .env")
	must(t, os.Link(at(".env"), at("README.md")))
	add("README.md", false, "a hard link to .env named README.md")
	must(t, os.Link(at(".git/config"), at("gitconfig.txt")))
	add("gitconfig.txt", false, "a hard link to .git/config")
	file("node_modules/pkg/.env")
	must(t, os.Link(at("node_modules/pkg/.env"), at("vendored.txt")))
	add("vendored.txt", false, "a hard link to a secret file inside node_modules")

	must(t, os.Symlink("chain2.md", at("chain1.md")))
	must(t, os.Symlink("main.go", at("chain2.md")))
	add("chain1.md", false, "a chain of symbolic links to main.go")
	add("chain2.md", false, "a symbolic link to main.go")
	must(t, os.Symlink("main.go", at("inside.go")))
	add("inside.go", false, "a symbolic link to a visible file (links are never followed)")

	must(t, os.WriteFile(filepath.Join(outside, "leak.txt"), []byte(Needle+" outside\n"), 0o644))
	must(t, os.Symlink(outside, at("out")))
	add("out", false, "a directory symlink leading outside")
	add("out/leak.txt", false, "a file through a directory symlink leading outside")
	must(t, os.Symlink(".git", at("gitdir")))
	add("gitdir/config", false, "a file of .git through a directory symlink")

	must(t, syscall.Mkfifo(at("pipe.txt"), 0o644))
	add("pipe.txt", false, "a FIFO")
	if syscall.Mknod(at("null.txt"), syscall.S_IFCHR|0o666, 1<<8|3) == nil {
		add("null.txt", false, "a character device")
	}
	if l, err := net.Listen("unix", at("sock.txt")); err == nil {
		t.Cleanup(func() { l.Close() })
		add("sock.txt", false, "a socket")
	}
	return dir, entries
}

// VisibleFiles are the regular files of the table a listing must show.
func VisibleFiles(entries []HostileEntry) []string {
	var out []string
	for _, e := range entries {
		if e.Visible && !strings.HasSuffix(e.Path, "/") {
			out = append(out, e.Path)
		}
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
