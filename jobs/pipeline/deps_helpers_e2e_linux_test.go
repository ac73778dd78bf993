package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/sandbox/egress"
	"github.com/patchwright/patchwright/sandbox/sandboxtest"
)

// What the dependency tests' fake registries (Go, npm, PyPI, Maven) share.

// requestLog records the paths a fake registry was asked for.
type requestLog struct {
	mu    sync.Mutex
	asked []string
}

func (l *requestLog) record(path string) {
	l.mu.Lock()
	l.asked = append(l.asked, path)
	l.mu.Unlock()
}

func (l *requestLog) paths() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.asked)
}

// fixtureFiles are the files of testdata/repos/NAME/repo, by slash path.
func fixtureFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	root := filepath.Join(sandboxtest.ReposDir(), name, "repo")
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// egressRefusals are the run's refused connections from its ledger.
func egressRefusals(t *testing.T, out string) []egress.Refusal {
	t.Helper()
	log, err := ledger.ReadFile(filepath.Join(out, FileLedger))
	if err != nil {
		t.Fatal(err)
	}
	var refused []egress.Refusal
	for _, rec := range log.Records {
		if p, err := rec.Payload(); err == nil {
			if r, ok := p.(*ledger.EgressRefused); ok {
				refused = append(refused, egress.Refusal(*r))
			}
		}
	}
	return refused
}

// wantSetupRefused checks that dependency setup after the change had a
// connection to host refused, by a command holding command, and that
// "Not verified" says so.
func wantSetupRefused(t *testing.T, out, host, command string) {
	t.Helper()
	hostIP, port, _ := strings.Cut(host, ":")
	refused := egressRefusals(t, out)
	if !slices.ContainsFunc(refused, func(r egress.Refusal) bool {
		return r.Host == hostIP && fmt.Sprint(r.Port) == port && strings.Contains(r.Command, command) && r.Phase == string(PhaseSetup)
	}) {
		t.Fatalf("ledger refusals %+v, want %s refused to %s in setup", refused, host, command)
	}
	body := readBody(t, out)
	notVerified := body[strings.Index(body, "Not verified"):]
	for _, want := range []string{"refused connections", "`" + host + "`", command, "Dependency setup after the change failed"} {
		if !strings.Contains(notVerified, want) {
			t.Errorf("Not verified lacks %q:\n%s", want, body)
		}
	}
}
