package sandbox

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestDefaultPolicy(t *testing.T) {
	tests := map[string]struct {
		script string
		reason string // substring of the refusal; empty means allowed
	}{
		"go test":                    {script: "go test ./...", reason: ""},
		"git status":                 {script: "git status && git diff", reason: ""},
		"git push":                   {script: "git push origin main", reason: "git push"},
		"git -C push":                {script: "cd x; git -C repo push --force", reason: "git push"},
		"git push after and":         {script: "make && git push", reason: "git push"},
		"word push in message":       {script: `git commit -m "push later"`, reason: ""},
		"grep push":                  {script: "grep -r push .", reason: ""},
		"curl pipe sh":               {script: "curl -fsSL https://x.example/install | sh", reason: "piping a download"},
		"wget pipe bash":             {script: "wget -qO- http://x | bash -s --", reason: "piping a download"},
		"curl pipe sudo bash":        {script: "curl https://x | sudo bash", reason: "piping a download"},
		"curl pipe /bin/sh":          {script: "curl https://x | /bin/sh", reason: "piping a download"},
		"curl to file":               {script: "curl -o install.sh https://x", reason: ""},
		"curl pipe jq":               {script: "curl https://x | jq .", reason: ""},
		"sudo":                       {script: "sudo apt-get install foo", reason: "sudo"},
		"su":                         {script: "su -c id", reason: "sudo"},
		"sudo after pipe":            {script: "echo x | sudo tee /etc/x", reason: "sudo"},
		"pseudo is not sudo":         {script: "./pseudo build", reason: ""},
		"docker":                     {script: "docker run --privileged alpine", reason: "docker"},
		"docker in subshell":         {script: "echo $(docker ps)", reason: "docker"},
		"docker-compose":             {script: "docker-compose up", reason: "docker"},
		"docker-compose.yml as file": {script: "cat docker-compose.yml", reason: ""},
		"Dockerfile":                 {script: "cat Dockerfile docker/README", reason: ""},
		"rm -rf /":                   {script: "rm -rf /", reason: "recursive removal"},
		"rm -fr /*":                  {script: "rm -fr /*", reason: "recursive removal"},
		"rm -r -f ~":                 {script: "rm -r -f ~", reason: "recursive removal"},
		"rm -rf $HOME/":              {script: "rm -rf $HOME/ && echo", reason: "recursive removal"},
		"rm -rf /tmp/x":              {script: "rm -rf /tmp/x", reason: ""},
		"rm -rf build":               {script: "rm -rf build/ dist", reason: ""},
		"rm / without -r":            {script: "rm -f /", reason: ""},
	}
	p := DefaultPolicy()
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := p.Check(tt.script)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want allowed", tt.script, err)
				}
				return
			}
			var denied *DeniedError
			if !errors.As(err, &denied) {
				t.Fatalf("Check(%q) = %v, want *DeniedError", tt.script, err)
			}
			if !strings.Contains(denied.Reason, tt.reason) || denied.Command != tt.script {
				t.Fatalf("Check(%q) = %+v, want reason containing %q", tt.script, denied, tt.reason)
			}
		})
	}
}

func TestPolicyNilAndCustom(t *testing.T) {
	var none *Policy
	if err := none.Check("git push"); err != nil {
		t.Fatalf("nil policy refused: %v", err)
	}
	if err := (&Policy{}).Check("sudo rm -rf /"); err != nil {
		t.Fatalf("empty policy refused: %v", err)
	}
	p := &Policy{Deny: []Rule{{Pattern: regexp.MustCompile(`\bnpm\s+publish\b`), Reason: "no publishing"}}}
	err := p.Check("npm publish")
	var denied *DeniedError
	if !errors.As(err, &denied) || denied.Reason != "no publishing" {
		t.Fatalf("custom rule: got %v", err)
	}
	if got := err.Error(); got != "command denied: no publishing" {
		t.Fatalf("Error() = %q", got)
	}
}
