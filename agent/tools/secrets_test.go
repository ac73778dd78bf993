package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/patchwright/patchwright/agent/secrets"
	"github.com/patchwright/patchwright/sandbox"
)

// Built from parts so that secret scanners do not flag this file. The
// first matches gitleaks' aws-access-token rule; the password matches no
// rule, which is why hard links are checked as well as scanned.
var (
	fakeKey      = "AKIA" + "Z3MPLE7QX4RT2WVB"
	weakPassword = "hunter" + "2-correct-horse"
)

// noSecret fails the test if text holds the fake key or the password.
func noSecret(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, fakeKey) || strings.Contains(text, weakPassword) {
		t.Errorf("%s holds the secret:\n%s", what, text)
	}
}

// stdout is a sandbox result whose stdout is out.
func stdout(out string) sandbox.Result {
	return sandbox.Result{Stdout: sandbox.Output{Head: []byte(out), Total: int64(len(out)), SHA256: "x"}}
}

func TestRunOutputWithSecretIsWithheld(t *testing.T) {
	env := newEnv(t, nil)
	env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) {
		return stdout("AWS_REGION=eu-west-1\nAWS_ACCESS_KEY_ID=" + fakeKey + "\n"), nil
	}
	res := env.call(t, "run", RunParams{Command: "cat .env"})
	wantCode(t, res, SecretDetected)
	noSecret(t, "the result", res.Text)
	if len(res.Commands) != 1 {
		t.Fatalf("commands %+v", res.Commands)
	}
	rec := res.Commands[0]
	noSecret(t, "the command record", rec.Output)
	if rec.Command != "cat .env" || !strings.Contains(rec.Output, "withheld: secret_detected: aws-access-token at line 3") {
		t.Errorf("record %+v", rec)
	}
	want := SecretFinding{Rule: "aws-access-token", Where: "output of command `cat .env`, line 3"}
	if len(res.Secrets) != 1 || res.Secrets[0] != want {
		t.Errorf("secrets %+v, want %+v", res.Secrets, want)
	}
	if !strings.Contains(res.Text, want.Rule+" at "+want.Where) {
		t.Errorf("text does not say the rule and where:\n%s", res.Text)
	}
}

func TestRunCleanOutputIsShown(t *testing.T) {
	env := newEnv(t, nil)
	env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) {
		return stdout("ok  \texample.com/x\t0.1s\n"), nil
	}
	res := env.call(t, "run", RunParams{Command: "go test ./..."})
	wantCode(t, res, "")
	if !strings.Contains(res.Text, "example.com/x") || res.Commands[0].Output == "" || len(res.Secrets) != 0 {
		t.Errorf("clean output changed: %+v", res)
	}
}

func TestVerifyOutputWithSecretIsWithheld(t *testing.T) {
	env := newEnv(t, nil)
	env.ver.checks = []Check{
		// A passing check's output is not in the text, only in the record.
		{Name: "build", Passed: true, CommandRecord: CommandRecord{Command: "go build ./...", Output: "key " + fakeKey + "\n"}},
		{Name: "test", Passed: false, CommandRecord: CommandRecord{Command: "go test ./...", ExitCode: 1, Output: "--- FAIL\n"}},
	}
	res := env.call(t, "verify", `{}`)
	wantCode(t, res, SecretDetected)
	noSecret(t, "the result", res.Text)
	if noSecret(t, "the build record", res.Commands[0].Output); res.Commands[1].Output != "--- FAIL\n" {
		t.Errorf("the clean record changed: %q", res.Commands[1].Output)
	}
	if len(res.Secrets) != 1 || res.Secrets[0].Where != "output of command `go build ./...`, line 1" {
		t.Errorf("secrets %+v", res.Secrets)
	}
}

func TestReadFileWithSecretIsWithheldAndNotRecorded(t *testing.T) {
	src := "package cfg\n\n// Test bucket.\nconst key = \"" + fakeKey + "\"\n"
	env := newEnv(t, map[string]string{"cfg/cfg.go": src})
	res := env.call(t, "read_file", ReadFileParams{Path: "cfg/cfg.go"})
	wantCode(t, res, SecretDetected)
	noSecret(t, "the result", res.Text)
	if len(res.Secrets) != 1 || res.Secrets[0].Where != "cfg/cfg.go line 4" {
		t.Errorf("secrets %+v", res.Secrets)
	}
	// A range: the line is still the file's.
	res = env.call(t, "read_file", ReadFileParams{Path: "cfg/cfg.go", StartLine: 3, EndLine: 4})
	if len(res.Secrets) != 1 || res.Secrets[0].Where != "cfg/cfg.go line 4" {
		t.Errorf("range: secrets %+v", res.Secrets)
	}
	// The model never saw the file, so it may not edit it.
	res = env.call(t, "edit", edits(Edit{Path: "cfg/cfg.go", OldText: "package cfg", NewText: "package config"}))
	wantCode(t, res, StaleFile)
	// The lines without the key can still be read.
	res = env.call(t, "read_file", ReadFileParams{Path: "cfg/cfg.go", StartLine: 1, EndLine: 3})
	wantCode(t, res, "")
}

func TestSearchWithSecretIsWithheld(t *testing.T) {
	env := newEnv(t, map[string]string{
		"a.go":     "package a\n",
		"cfg/x.go": "package cfg\n\nvar key = \"" + fakeKey + "\"\n",
	})
	res := env.call(t, "search", SearchParams{Pattern: "key|package"})
	wantCode(t, res, SecretDetected)
	noSecret(t, "the result", res.Text)
	if len(res.Secrets) != 1 || res.Secrets[0].Where != "cfg/x.go line 3" {
		t.Errorf("secrets %+v", res.Secrets)
	}
	if !strings.Contains(res.Text, "cfg/x.go line 3") {
		t.Errorf("the result does not say which file to leave out:\n%s", res.Text)
	}
	// Following the hint works.
	res = env.call(t, "search", SearchParams{Pattern: "key|package", Glob: "a.go"})
	wantCode(t, res, "")
}

// TestHardLinkToSecret: `ln .env notes.txt` gives a secret an innocent
// name. The password matches no gitleaks rule, so this is the link check
// alone; the key shows the scan behind it.
func TestHardLinkToSecret(t *testing.T) {
	env := newEnv(t, map[string]string{
		".env":            "DB_PASSWORD=" + weakPassword + "\n",
		"config/.env.aws": "AWS_ACCESS_KEY_ID=" + fakeKey + "\n",
		"plain.txt":       "DB_PASSWORD is read from the environment\n",
		"main.go":         "package main\n",
		"docs/README":     "docs\n",
	})
	link := func(from, to string) {
		t.Helper()
		if err := os.Link(filepath.Join(env.dir, from), filepath.Join(env.dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	link(".env", "notes.txt")
	link("config/.env.aws", "docs/aws.txt")
	// Two names, neither secret: an ordinary file.
	link("main.go", "copy.go")

	for _, p := range []string{"notes.txt", "docs/aws.txt"} {
		res := env.call(t, "read_file", ReadFileParams{Path: p})
		wantCode(t, res, PathDenied)
		noSecret(t, "read_file "+p, res.Text)
	}
	res := env.call(t, "search", SearchParams{Pattern: "DB_PASSWORD|AWS_ACCESS"})
	wantCode(t, res, "")
	noSecret(t, "search", res.Text)
	if !strings.Contains(res.Text, "plain.txt:1:") || !strings.Contains(res.Text, "left out 2 matching files that are hard links") {
		t.Errorf("search result:\n%s", res.Text)
	}
	wantCode(t, env.call(t, "read_file", ReadFileParams{Path: "copy.go"}), "")
	// Editing through the link is refused too: a failed edit can quote
	// the file.
	res = env.call(t, "edit", edits(Edit{Path: "notes.txt", OldText: "DB", NewText: "X"}))
	wantCode(t, res, PathDenied)
}

// TestHardLinkMadeByCommand: a link made after the index was built is
// found, because a command makes the index stale.
func TestHardLinkMadeByCommand(t *testing.T) {
	env := newEnv(t, map[string]string{".env": "DB_PASSWORD=" + weakPassword + "\n", "a.txt": "a\n", "b.txt": "b\n"})
	if err := os.Link(filepath.Join(env.dir, "a.txt"), filepath.Join(env.dir, "a2.txt")); err != nil {
		t.Fatal(err)
	}
	wantCode(t, env.call(t, "read_file", ReadFileParams{Path: "a2.txt"}), "") // builds the index
	env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) {
		return sandbox.Result{}, os.Link(filepath.Join(env.dir, ".env"), filepath.Join(env.dir, "x.txt"))
	}
	env.call(t, "run", RunParams{Command: "ln .env x.txt"})
	res := env.call(t, "read_file", ReadFileParams{Path: "x.txt"})
	wantCode(t, res, PathDenied)
	noSecret(t, "read_file x.txt", res.Text)
}

// TestBadPaths: every tool taking a path answers a NUL byte, an over-long
// component and an over-long path with invalid_arguments, never a Go
// error.
func TestBadPaths(t *testing.T) {
	env := newEnv(t, map[string]string{"a.txt": "a\n"})
	bad := map[string]string{
		"NUL":            "a\x00b.txt",
		"long component": strings.Repeat("x", 256) + "/a.txt",
		"long path":      strings.Repeat("abcdefg/", 600) + "a.txt",
	}
	for name, p := range bad {
		calls := map[string]any{
			"list_files":  ListFilesParams{Path: p},
			"read_file":   ReadFileParams{Path: p},
			"search":      SearchParams{Pattern: "a", Path: p},
			"edit":        edits(Edit{Path: p, OldText: "a", NewText: "b"}),
			"write_file":  WriteFileParams{Path: p, Content: "x"},
			"delete_file": DeleteFileParams{Path: p},
		}
		for tool, args := range calls {
			t.Run(name+"/"+tool, func(t *testing.T) {
				res, err := env.callErr(t, tool, args)
				if err != nil {
					t.Fatalf("Go error %v", err)
				}
				wantCode(t, res, InvalidArguments)
				if strings.Contains(res.Text, "\x00") || strings.Contains(res.Text, strings.Repeat("x", 256)) {
					t.Errorf("the result repeats the bad path:\n%q", res.Text)
				}
			})
		}
	}
	// A component of exactly 255 bytes is fine: not found, not invalid.
	wantCode(t, env.call(t, "read_file", ReadFileParams{Path: strings.Repeat("y", 255)}), NotFound)
}

// TestFileFailure: errors of the operating system about a path are
// results; an I/O error and an error without an errno end the run.
func TestFileFailure(t *testing.T) {
	pathErr := func(errno syscall.Errno) error { return &fs.PathError{Op: "openat", Path: "a", Err: errno} }
	for errno, code := range map[syscall.Errno]Code{
		syscall.EACCES:       PathDenied,
		syscall.EPERM:        PathDenied,
		syscall.EROFS:        PathDenied,
		syscall.ENAMETOOLONG: InvalidArguments,
		syscall.EINVAL:       InvalidArguments,
		syscall.EISDIR:       InvalidArguments,
		syscall.ENOSPC:       TooLarge,
		syscall.EDQUOT:       TooLarge,
		syscall.ENOENT:       NotFound,
		syscall.ELOOP:        PathDenied,
	} {
		res, ok := fileFailure("a", pathErr(errno))
		if !ok {
			t.Errorf("%v: not a result", errno)
			continue
		}
		wantCode(t, res, code)
	}
	for _, err := range []error{pathErr(syscall.EIO), errors.New("disk full")} {
		if res, ok := fileFailure("a", err); ok {
			t.Errorf("%v: a result %+v, want a Go error", err, res)
		}
	}
}

// TestFIFOsDoNotHang: named pipes a command planted where .gitignore
// files and sources are expected are not opened blockingly. Were they,
// the calls would never return and the test would time out.
func TestFIFOsDoNotHang(t *testing.T) {
	env := newEnv(t, map[string]string{"a.go": "package a\n", "sub/b.go": "package b\n"})
	for _, p := range []string{".gitignore", "sub/.gitignore", "pipe.go"} {
		if err := syscall.Mkfifo(filepath.Join(env.dir, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := env.call(t, "list_files", ListFilesParams{})
	wantCode(t, res, "")
	if !strings.Contains(res.Text, "sub/b.go") {
		t.Errorf("listing:\n%s", res.Text)
	}
	res = env.call(t, "search", SearchParams{Pattern: "package"})
	wantCode(t, res, "")
	if !strings.Contains(res.Text, "a.go:1:") || !strings.Contains(res.Text, "sub/b.go:1:") {
		t.Errorf("search:\n%s", res.Text)
	}
	for _, p := range []string{".gitignore", "pipe.go"} {
		wantCode(t, env.call(t, "read_file", ReadFileParams{Path: p}), InvalidArguments)
	}
}

// TestToolsHonourContext: a cancelled call ends with the context's error.
func TestToolsHonourContext(t *testing.T) {
	env := newEnv(t, map[string]string{"a.go": "package a\n", "b/c.go": "package c\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, args := range map[string]any{
		"search":     SearchParams{Pattern: "package"},
		"list_files": ListFilesParams{},
	} {
		tool, _ := env.set.Lookup(name)
		raw, _ := json.Marshal(args)
		if _, err := tool.Call(ctx, raw); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err %v, want context.Canceled", name, err)
		}
	}
}

// TestSecretFileValues: a value of .env no gitleaks rule knows is
// withheld wherever it shows, including in a copy made after the index
// was built; settings that are not secret-looking are not.
func TestSecretFileValues(t *testing.T) {
	env := newEnv(t, map[string]string{
		".env":         "NODE_ENV=development\nAWS_REGION=eu-west-1\nPORT=8080\nDB_PASSWORD=\"" + weakPassword + "\"\n",
		".env.example": "DB_PASSWORD=your-Password-here\n",
		"main.go":      "package main\n",
	})
	out := "mode development in eu-west-1 on 8080; set DB_PASSWORD=your-Password-here\n"
	env.sb.exec = func(context.Context, sandbox.Command) (sandbox.Result, error) { return stdout(out), nil }
	wantCode(t, env.call(t, "run", RunParams{Command: "./serve --dry-run"}), "")

	out = "connecting\nwith " + weakPassword + "\n"
	res := env.call(t, "run", RunParams{Command: "env | grep DB"})
	wantCode(t, res, SecretDetected)
	noSecret(t, "the result", res.Text)
	noSecret(t, "the record", res.Commands[0].Output)
	if len(res.Secrets) != 1 || res.Secrets[0] != (SecretFinding{Rule: RuleSecretFile, Where: "output of command `env | grep DB`, line 3"}) {
		t.Errorf("secrets %+v", res.Secrets)
	}

	// A copy has one link; its content is still a value of .env.
	if err := os.WriteFile(filepath.Join(env.dir, "copy.txt"), []byte("pw "+weakPassword+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = env.call(t, "read_file", ReadFileParams{Path: "copy.txt"})
	wantCode(t, res, SecretDetected)
	if len(res.Secrets) != 1 || res.Secrets[0].Where != "copy.txt line 1" {
		t.Errorf("secrets %+v", res.Secrets)
	}
}

func TestSecretValues(t *testing.T) {
	got := secretValues([]byte("# comment\nexport A=x\nTOKEN='s3cr3t-Value-99'\nmachine example.com login me password Pa55w0rd!x\nlowercaseonlyword\n-----BEGIN KEY-----\n"))
	want := []string{"s3cr3t-Value-99", "Pa55w0rd!x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("values %q, want %q", got, want)
	}
}

func TestWithholdSecrets(t *testing.T) {
	sc, err := secrets.Default()
	if err != nil {
		t.Fatal(err)
	}
	rec := CommandRecord{Command: "make setup", Output: "--- stdout (9 bytes) ---\nkey " + fakeKey + "\n", StdoutSHA256: "x"}
	got, found, err := WithholdSecrets(context.Background(), sc, rec)
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the record", got.Output)
	if len(found) != 1 || found[0] != (SecretFinding{Rule: "aws-access-token", Where: "output of command `make setup`, line 2"}) || got.StdoutSHA256 != "x" {
		t.Errorf("record %+v, findings %+v", got, found)
	}
	clean := CommandRecord{Command: "make", Output: "ok\n"}
	if got, found, _ := WithholdSecrets(context.Background(), sc, clean); got != clean || found != nil {
		t.Errorf("a clean record changed: %+v %+v", got, found)
	}
}

// BenchmarkSecretIndex measures the walk that indexes secret files, which
// runs once after each run or verify call, on the search benchmark's
// repository of 10,000 files with a .env added. Run:
//
//	go test -run '^$' -bench BenchmarkSecretIndex ./agent/tools/
func BenchmarkSecretIndex(b *testing.B) {
	dir := generateRepo(b, 10000)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("DB_PASSWORD="+weakPassword+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_, values, err := indexSecretFiles(context.Background(), dir)
		if err != nil || len(values) != 1 {
			b.Fatalf("values %q, %v", values, err)
		}
	}
}

// TestWithholdSecretsInWorkTree: setup output holding a value of .env
// that no rule knows is withheld, as a tool's output would be.
func TestWithholdSecretsInWorkTree(t *testing.T) {
	env := newEnv(t, map[string]string{".env": "DB_PASSWORD=" + weakPassword + "\n", "main.go": "package main\n"})
	sc, err := secrets.Default()
	if err != nil {
		t.Fatal(err)
	}
	rec := CommandRecord{Command: "make setup", Output: "migrating\nusing " + weakPassword + "\n"}
	if got, found, _ := WithholdSecrets(context.Background(), sc, rec); got != rec || found != nil {
		t.Fatalf("without the work tree the value is unknown, yet: %+v %+v", got, found)
	}
	ws, err := sandbox.OpenWorkspace(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	got, found, err := WithholdSecretsIn(context.Background(), sc, ws, rec)
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the record", got.Output)
	if got.Output != "[withheld: secret_detected: "+RuleSecretFile+" at line 2]\n" || len(found) != 1 || found[0].Rule != RuleSecretFile {
		t.Errorf("record %q, findings %+v", got.Output, found)
	}
}

// TestSetRedact: the model's own text loses each match and each line
// holding a secret file's value; the rest stays.
func TestSetRedact(t *testing.T) {
	env := newEnv(t, map[string]string{".env": "DB_PASSWORD=" + weakPassword + "\n"})
	text := "step one\nthe key " + fakeKey + " works\nand " + weakPassword + " too\nthen " + weakPassword + "\nend"
	got, found, err := env.set.Redact(context.Background(), "turn", text)
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the text", got)
	want := "step one\nthe key [withheld: secret_detected: aws-access-token at turn line 2] works\n" +
		"[withheld: secret_detected: " + RuleSecretFile + " at turn line 3]\n[withheld: secret_detected: " + RuleSecretFile + " at turn line 4]\nend"
	if got != want || len(found) != 3 {
		t.Errorf("Redact =\n%s\nwant\n%s\nfindings %+v", got, want, found)
	}
}

// TestChangedPathWithSecretName: a file written under a name that is a
// key is written (the change scan stops it later), and the result names
// it with the key withheld.
func TestChangedPathWithSecretName(t *testing.T) {
	env := newEnv(t, nil)
	res := env.call(t, "write_file", WriteFileParams{Path: "docs/" + fakeKey + ".md", Content: "notes\n"})
	wantCode(t, res, SecretDetected)
	noSecret(t, "the result", res.Text)
	if !strings.Contains(res.Text, "docs/[withheld: secret_detected: aws-access-token].md") {
		t.Errorf("result:\n%s", res.Text)
	}
}
