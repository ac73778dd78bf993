package pipeline

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchwright/patchwright/agent"
	"github.com/patchwright/patchwright/agent/provider"
	pt "github.com/patchwright/patchwright/agent/provider/providertest"
	"github.com/patchwright/patchwright/jobs/runstore"
	"github.com/patchwright/patchwright/sandbox"
	"github.com/patchwright/patchwright/sandbox/docker"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
	"github.com/patchwright/patchwright/verify/findings"
	"github.com/patchwright/patchwright/webhook/runpage"
)

// Attacks on the secret scan end to end (issue 21, items 3 and 7): real
// Docker, real git, the scripted model at the wire. The keys are made at
// run time from parts, so this file holds nothing a scanner matches.

// e2eKey matches gitleaks' aws-access-token rule.
var e2eKey = "AKIA" + "Q7XR2MBN5TLC4PWE"

// e2ePEM is a private key made for the test.
func e2ePEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}

// jsonText is s as the inside of a JSON string literal.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// syncBuffer is a log sink the run's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runLogged is scenario.run with the executor's log kept, at debug level.
func runLogged(t *testing.T, s scenario) (*Result, string, string) {
	t.Helper()
	res, out, logs, err := runLoggedErr(t, s)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res, out, logs
}

// runLoggedErr is runLogged for a run that may end in an error, which
// it returns.
func runLoggedErr(t *testing.T, s scenario) (*Result, string, string, error) {
	t.Helper()
	image := sandboxtest.Image(t)
	engine := sandboxtest.NewDocker(t, docker.Options{})
	srv := pt.New(t, s.turns...)
	p, err := provider.New(s.wire+":"+map[string]string{provider.NameOpenAI: pt.OpenAIModel, provider.NameAnthropic: pt.AnthropicModel}[s.wire], srv.Options(s.wire))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	out := filepath.Join(t.TempDir(), "out")
	e := &Executor{
		Sandboxes:     engine,
		Provider:      p,
		Image:         image,
		SandboxLimits: sandbox.Limits{CPUs: 2},
		CacheVolume:   func(string) string { return sandboxtest.CacheVolumeFor(image) },
		Logger:        slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if s.tune != nil {
		s.tune(e)
	}
	res, err := e.Execute(context.Background(), Job{ID: "test-" + t.Name(), RepoURL: s.repo, Issue: s.issue, OutDir: out, Publisher: LocalPublisher{}})
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns were not used", srv.Remaining())
	}
	return res, out, logs.String(), err
}

// oneRun is a run store holding one record.
type oneRun struct{ rec runstore.Record }

func (o oneRun) Get(context.Context, string) (runstore.Record, error) { return o.rec, nil }

// runPage renders the run page of the run in out, as serve shows it, and
// returns its text with HTML's escapes undone.
func runPage(t *testing.T, out string) string {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	rec := runstore.Record{ID: "run-1", Done: true, UpdatedAt: time.Now(), Ledger: read(FileLedger), Result: read(FileResult), Body: read(FileBody)}
	signer, err := runpage.NewSigner([]byte("test signing key"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /runs/{id}", &runpage.Handler{Store: oneRun{rec}, Signer: signer})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(signer.Link(srv.URL+"/runs", "run-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("run page: %d %v", resp.StatusCode, err)
	}
	if !strings.Contains(string(page), "Model turn 1") {
		t.Fatalf("the run page shows no turn:\n%s", page)
	}
	return html.UnescapeString(string(page))
}

// noneHolds fails the test for each of texts that holds one of secrets.
func noneHolds(t *testing.T, texts map[string]string, secrets ...string) {
	t.Helper()
	for name, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %q", name, s)
			}
		}
	}
}

// outputs are the run's files and run page, by name.
func outputs(t *testing.T, out, logs string) map[string]string {
	t.Helper()
	m := map[string]string{"the log": logs, "the run page": runPage(t, out)}
	for _, name := range []string{FileLedger, FileResult, FileBody} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		m[name] = string(data)
	}
	return m
}

// TestSecretInModelWords: the model "reassembles" an AWS key and a PEM
// key from pieces no rule matched and writes them in its own turn, in a
// tool call's arguments and in its finish summary. None of them reaches
// the ledger, result.json, pr.md, the run page or the log; the places
// hold a note naming the rule.
func TestSecretInModelWords(t *testing.T) {
	key := e2ePEM(t)
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, logs := runLogged(t, scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Double is slow", Body: "Make Double faster."},
		wire:  provider.NameAnthropic,
		turns: []pt.Turn{
			{Text: "The pieces make " + e2eKey + " and\n" + key, ToolCalls: []pt.ToolCall{pt.Call("search", `{"pattern":"`+e2eKey+`","glob":"`+jsonText(key)+`"}`)}},
			call("read_file", `{"path":"calc.go"}`),
			call("edit", `{"edits":[{"path":"calc.go","old_text":"return Add(n, n)","new_text":"return n * 2"}]}`),
			call("finish", `{"summary":"Done. For the record the key is `+e2eKey+` and `+jsonText(key)+`"}`),
		},
	})
	if res.HeadCommit == "" {
		t.Errorf("the clean change was not committed: %s (%s)", res.Outcome, res.Reason)
	}
	texts := outputs(t, out, logs)
	noneHolds(t, texts, e2eKey, strings.Split(key, "\n")[1], jsonText(strings.Split(key, "\n")[1]))
	for _, name := range []string{FileLedger, FileBody, "the run page"} {
		if !strings.Contains(texts[name], "withheld: secret_detected: aws-access-token") {
			t.Errorf("%s does not say what was withheld", name)
		}
	}
	if !strings.Contains(texts[FileLedger], "[withheld: secret_detected: private-key") {
		t.Error("the ledger does not say the private key was withheld")
	}
	if !strings.Contains(logs, "model text withheld") {
		t.Errorf("the log does not say the model's text was withheld:\n%s", logs)
	}
}

// TestBase64KeyInNewFile: a PEM key written to a new file as base64
// (wrapped as base64(1) prints it) is found by the change's scan: nothing
// is committed and result.json has the secret finding.
func TestBase64KeyInNewFile(t *testing.T) {
	key := e2ePEM(t)
	enc := base64.StdEncoding.EncodeToString([]byte(key))
	var wrapped strings.Builder
	for len(enc) > 76 {
		wrapped.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	wrapped.WriteString(enc + "\n")
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, logs := runLogged(t, scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Add the deploy key"},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("write_file", `{"path":"deploy/key.txt","content":"`+jsonText(wrapped.String())+`"}`),
			call("finish", `{"summary":"Added the key."}`),
		},
	})
	if res.HeadCommit != "" || res.Branch != "" || len(agentBranches(t, repo)) != 0 {
		t.Fatalf("committed: branch %q head %q", res.Branch, res.HeadCommit)
	}
	if len(res.Secrets) != 1 || res.Secrets[0].RuleID != "private-key" || res.Secrets[0].File != "deploy/key.txt" {
		t.Errorf("secrets %+v", res.Secrets)
	}
	readResult(t, out)
	if r := readTyped(t, out); !hasSecretFinding(r.Findings, "deploy/key.txt") {
		t.Errorf("result.json findings: %+v", r.Findings)
	}
	noneHolds(t, outputs(t, out, logs), strings.Split(wrapped.String(), "\n")[1])
}

// TestSecretInFileName: a new file named after a key is not committed,
// and its name is printed nowhere as it is: result.json's files_changed
// and findings, the Changes table and the reason name it with the key
// withheld.
func TestSecretInFileName(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, logs := runLogged(t, scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Document the keys"},
		wire:  provider.NameAnthropic,
		turns: []pt.Turn{
			call("write_file", `{"path":"docs/keys/`+e2eKey+`.md","content":"rotated monthly\n"}`),
			call("finish", `{"summary":"Documented the keys."}`),
		},
	})
	if res.HeadCommit != "" || len(agentBranches(t, repo)) != 0 {
		t.Fatalf("committed: head %q", res.HeadCommit)
	}
	shown := "docs/keys/[withheld: secret_detected: aws-access-token].md"
	readResult(t, out)
	r := readTyped(t, out)
	if len(r.FilesChanged) != 1 || r.FilesChanged[0] != shown {
		t.Errorf("files_changed %q", r.FilesChanged)
	}
	if !hasSecretFinding(r.Findings, shown) {
		t.Errorf("findings %+v", r.Findings)
	}
	body := readBody(t, out)
	if !strings.Contains(body, shown) {
		t.Errorf("pr.md does not name the file with the key withheld:\n%s", body)
	}
	noneHolds(t, outputs(t, out, logs), e2eKey)
}

// readTyped reads result.json into the fields these tests look at.
func readTyped(t *testing.T, out string) (r struct {
	FilesChanged []string           `json:"files_changed"`
	Findings     []findings.Finding `json:"findings"`
}) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, FileResult))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func hasSecretFinding(fs []findings.Finding, path string) bool {
	for _, f := range fs {
		if f.Kind == "secret" && f.Path == path {
			return true
		}
	}
	return false
}

// TestSecretInLinkTarget: a symbolic link's target is what the commit
// holds for it, so a target that is a key is a secret in the change.
func TestSecretInLinkTarget(t *testing.T) {
	files := calcFiles(false)
	files[".github/agent.yml"] = cheapConfig
	repo := gitRepo(t, files)
	res, out, logs := runLogged(t, scenario{
		repo:  repo,
		issue: agent.Issue{Title: "Link the current key"},
		wire:  provider.NameOpenAI,
		turns: []pt.Turn{
			call("run", `{"command":"ln -s `+e2eKey+` current"}`),
			call("finish", `{"summary":"Linked it."}`),
		},
	})
	if res.HeadCommit != "" || len(agentBranches(t, repo)) != 0 {
		t.Fatalf("committed: head %q", res.HeadCommit)
	}
	if len(res.Secrets) != 1 || res.Secrets[0].File != "current" || res.Secrets[0].RuleID != "aws-access-token" {
		t.Errorf("secrets %+v", res.Secrets)
	}
	noneHolds(t, outputs(t, out, logs), e2eKey)
}
