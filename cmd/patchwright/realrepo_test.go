//go:build realrepo

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pt "github.com/patchwright/patchwright/agent/provider/providertest"
)

// TestRealRepository replays an upstream fix on a local clone of a real
// repository through `patchwright run`: a scripted model writes each file
// the fix changed, whole, and finishes. It is a tool for trying
// Patchwright on real repositories (docs/real-repositories.md), not part
// of CI (the build tag keeps it out): REAL_REPO is the clone (its main at the commit before the fix),
// REAL_FIX the fix's commit in it, REAL_IMAGE the sandbox image, REAL_OUT
// where pr.md and result.json go.
func TestRealRepository(t *testing.T) {
	repo, fix, image, out := os.Getenv("REAL_REPO"), os.Getenv("REAL_FIX"), os.Getenv("REAL_IMAGE"), os.Getenv("REAL_OUT")
	if repo == "" || fix == "" || image == "" || out == "" {
		t.Skip("set REAL_REPO, REAL_FIX, REAL_IMAGE and REAL_OUT")
	}
	git := func(args ...string) string {
		b, err := exec.Command("git", append([]string{"-C", repo}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(b)
	}
	args := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	var turns []pt.Turn
	for _, line := range strings.Split(strings.TrimSpace(git("diff", "--no-renames", "--name-status", "main", fix)), "\n") {
		f := strings.Fields(line)
		status, path := f[0], f[1]
		switch status {
		case "D":
			turns = append(turns, pt.Calls(pt.Call("delete_file", args(map[string]any{"path": path}))))
		default:
			if status == "M" {
				// read_file shows at most 2000 lines at once; a file
				// must be read before it is overwritten.
				lines := strings.Count(git("show", "main:"+path), "\n") + 1
				for start := 1; start <= lines; start += 2000 {
					turns = append(turns, pt.Calls(pt.Call("read_file", args(map[string]any{"path": path, "start_line": start, "end_line": min(start+1999, lines)}))))
				}
			}
			turns = append(turns, pt.Calls(pt.Call("write_file", args(map[string]any{"path": path, "content": git("show", fix+":"+path)}))))
		}
	}
	turns = append(turns, pt.Calls(pt.Call("finish", `{"summary":"Applied the upstream fix."}`)))
	srv := pt.New(t, turns...)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "test-key")
	msg := strings.SplitN(git("log", "-1", "--format=%s%n%n%b", fix), "\n", 2)
	issue := filepath.Join(t.TempDir(), "issue.md")
	os.WriteFile(issue, []byte("# "+msg[0]+"\n\n"+msg[1]+"\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--repo", repo, "--issue-file", issue,
		"--model", "openai:" + pt.OpenAIModel, "--image", image, "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("patchwright run exited %d\n%s", code, stderr.String())
	}
	t.Logf("%s\npr.md and result.json are in %s", stderr.String(), out)
}
