package findings

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func gitShow(dir, rev, p string) []byte {
	out, err := exec.Command("git", "-C", dir, "show", rev+":"+p).Output()
	if err != nil {
		return nil
	}
	return out
}

func TestScanHistory(t *testing.T) {
	dir := os.Getenv("SCAN_REPO")
	if dir == "" {
		t.Skip()
	}
	revs, _ := exec.Command("git", "-C", dir, "rev-list", "--no-merges", "-n", os.Getenv("SCAN_N"), "HEAD").Output()
	for _, rev := range strings.Fields(string(revs)) {
		names, _ := exec.Command("git", "-C", dir, "diff", "--name-only", "--no-renames", rev+"^", rev).Output()
		subj, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%s", rev).Output()
		var files []File
		for _, p := range strings.Fields(string(names)) {
			files = append(files, File{Path: p, Base: gitShow(dir, rev+"^", p), New: gitShow(dir, rev, p)})
		}
		fs := Analyze(Input{Files: files, IssueTitle: strings.TrimSpace(string(subj)), Limits: Limits{30, 1500}})
		for _, f := range fs {
			if f.Kind == NewDependency {
				continue
			}
			t.Logf("%s %s | %s %s:%d %s", rev[:8], strings.TrimSpace(string(subj)), f.Kind, f.Path, f.Line, f.Detail)
		}
	}
}
