package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// TestRunInDocker runs the run tool through a real Docker sandbox with the
// default policy and the offline test image. It skips under -short.
func TestRunInDocker(t *testing.T) {
	image := sandboxtest.Image(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	dir := sandboxtest.Workspace(t)
	writeTree(t, dir, map[string]string{"a.go": "package a\n"})
	sandboxtest.HandOver(t, dir)
	sb := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: dir})
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	set, err := New(Options{Workspace: ws, Sandbox: sb, Verifier: &fakeVerifier{},
		Limits: Limits{RunOutputLimit: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	env := &testEnv{dir: dir, ws: ws, set: set}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

	t.Run("exit code and both streams", func(t *testing.T) {
		res := env.call(t, "run", RunParams{Command: "echo hi; echo err >&2; exit 3"})
		wantCode(t, res, "")
		for _, want := range []string{"exit code 3 in ", "--- stdout (3 bytes) ---\nhi\n", "--- stderr (4 bytes) ---\nerr\n"} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("text lacks %q:\n%s", want, res.Text)
			}
		}
		rec := res.Commands[0]
		if rec.ExitCode != 3 || rec.StdoutSHA256 != sum("hi\n") || rec.StderrSHA256 != sum("err\n") || rec.OutputBytes != 7 {
			t.Errorf("record %+v", rec)
		}
	})
	t.Run("denied by the policy", func(t *testing.T) {
		res := env.call(t, "run", RunParams{Command: "git push origin main"})
		wantCode(t, res, CommandDenied)
		if !strings.Contains(res.Text, "git push is not allowed") {
			t.Errorf("no reason:\n%s", res.Text)
		}
	})
	t.Run("timeout keeps the partial output", func(t *testing.T) {
		res := env.call(t, "run", RunParams{Command: "echo started; sleep 30", TimeoutS: 1})
		wantCode(t, res, Timeout)
		if !strings.Contains(res.Text, "started") || !res.Commands[0].TimedOut {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("big output has head, tail and a marker", func(t *testing.T) {
		res := env.call(t, "run", RunParams{Command: "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST"})
		wantCode(t, res, "")
		if !strings.Contains(res.Text, "--- stdout (200012 bytes) ---\nFIRST\n") || !strings.Contains(res.Text, "bytes dropped ...]") ||
			!strings.HasSuffix(res.Text, "LAST\n") || len(res.Text) > 3000 {
			t.Errorf("text (%d bytes): %.300s ... %s", len(res.Text), res.Text, res.Text[max(0, len(res.Text)-100):])
		}
		if res.Commands[0].OutputBytes != 200012 {
			t.Errorf("OutputBytes = %d", res.Commands[0].OutputBytes)
		}
	})
	t.Run("a command's rewrite makes the file stale", func(t *testing.T) {
		wantCode(t, env.call(t, "read_file", ReadFileParams{Path: "a.go"}), "")
		wantCode(t, env.call(t, "run", RunParams{Command: "sed -i 's/package a/package a \\/\\/ fmt/' a.go"}), "")
		wantCode(t, env.call(t, "edit", edits(Edit{Path: "a.go", OldText: "package a", NewText: "package b"})), StaleFile)
	})
}

// TestSecretsInDocker: the routes to .env through a real sandbox: cat,
// a hard link read back with read_file and search, and base64. It skips
// under -short.
func TestSecretsInDocker(t *testing.T) {
	image := sandboxtest.Image(t)
	d := sandboxtest.NewDocker(t, docker.Options{})
	dir := sandboxtest.Workspace(t)
	writeTree(t, dir, map[string]string{
		".env":    "AWS_ACCESS_KEY_ID=" + fakeKey + "\nDB_PASSWORD=" + weakPassword + "\n",
		"main.go": "package main\n",
	})
	sandboxtest.HandOver(t, dir)
	sb := sandboxtest.New(t, d, sandbox.Spec{Image: image, Workspace: dir})
	ws, err := sandbox.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	set, err := New(Options{Workspace: ws, Sandbox: sb, Verifier: &fakeVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	env := &testEnv{dir: dir, ws: ws, set: set}
	for _, cmd := range []string{"cat .env", "grep DB_ .env", "base64 .env", "cat .env >&2; exit 1"} {
		res := env.call(t, "run", RunParams{Command: cmd})
		wantCode(t, res, SecretDetected)
		noSecret(t, cmd, res.Text)
		noSecret(t, cmd+" record", res.Commands[0].Output)
	}
	wantCode(t, env.call(t, "run", RunParams{Command: "ln .env notes.txt"}), "")
	wantCode(t, env.call(t, "read_file", ReadFileParams{Path: "notes.txt"}), PathDenied)
	res := env.call(t, "search", SearchParams{Pattern: "DB_|AWS"})
	noSecret(t, "search", res.Text)
	if !strings.Contains(res.Text, "left out 1 matching files") {
		t.Errorf("search:\n%s", res.Text)
	}
}
