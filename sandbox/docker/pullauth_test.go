package docker_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/registry"

	"github.com/patchwright/patchwright/sandbox/docker"
)

func TestRegistryHost(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io":                              "ghcr.io",
		" GHCR.io ":                            "ghcr.io",
		"https://index.docker.io/v1/":          "docker.io",
		"registry-1.docker.io":                 "docker.io",
		"registry.hub.docker.com":              "docker.io",
		"docker.io":                            "docker.io",
		"registry.example.com:5000":            "registry.example.com:5000",
		"http://registry.example.com:5000/v2/": "registry.example.com:5000",
		"127.0.0.1:5000":                       "127.0.0.1:5000",
		"[::1]:5000":                           "[::1]:5000",
		"localhost":                            "localhost",
	} {
		if got, err := docker.RegistryHost(in); err != nil || got != want {
			t.Errorf("RegistryHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, say := range map[string]string{
		"":                  "is not a host",
		"ghcr.io:0":         `"0" is not a port`,
		"ghcr.io:65536":     `"65536" is not a port`,
		"ghcr.io:https":     `"https" is not a port`,
		"bad host":          "is not a host",
		"-ghcr.io":          "is not a host",
		"ghcr.io.":          "is not a host",
		"robot:x@ghcr.io":   "is not",
		"ghcr_io":           "is not a host",
		"ghcr.io/owner/img": "",
	} {
		got, err := docker.RegistryHost(in)
		if say == "" {
			// A path is cut off: the host is what is left.
			if err != nil || got != "ghcr.io" {
				t.Errorf("RegistryHost(%q) = %q, %v; want ghcr.io", in, got, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), say) {
			t.Errorf("RegistryHost(%q) = %q, %v; want an error saying %q", in, got, err, say)
		}
	}
}

func TestParseRegistries(t *testing.T) {
	got, err := docker.ParseRegistries("ghcr.io, docker.io,index.docker.io  registry.example.com:5000,GHCR.IO")
	if want := []string{"docker.io", "ghcr.io", "registry.example.com:5000"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseRegistries = %q, %v; want %q", got, err, want)
	}
	if got, err := docker.ParseRegistries(" , "); err != nil || len(got) != 0 {
		t.Errorf("an empty list = %q, %v; want none", got, err)
	}
	if _, err := docker.ParseRegistries("ghcr.io,bad_host"); err == nil {
		t.Error("a bad entry was accepted")
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestParseRegistryAuth(t *testing.T) {
	const secret = "s3cret-token"
	good := map[string]struct {
		file string
		want map[string]registry.AuthConfig
	}{
		"auth": {`{"auths": {"ghcr.io": {"auth": "` + b64("robot:"+secret+":x") + `"}}}`,
			map[string]registry.AuthConfig{"ghcr.io": {Username: "robot", Password: secret + ":x", ServerAddress: "ghcr.io"}}},
		"user and password, Docker Hub's long name": {`{"auths": {"https://index.docker.io/v1/": {"username": "robot", "password": "` + secret + `"}}}`,
			map[string]registry.AuthConfig{"docker.io": {Username: "robot", Password: secret, ServerAddress: "docker.io"}}},
		"identity token": {`{"auths": {"registry.example.com:5000": {"identitytoken": "` + secret + `"}}}`,
			map[string]registry.AuthConfig{"registry.example.com:5000": {IdentityToken: secret, ServerAddress: "registry.example.com:5000"}}},
		"none": {`{"auths": {}}`, map[string]registry.AuthConfig{}},
	}
	for name, c := range good {
		t.Run(name, func(t *testing.T) {
			got, err := docker.ParseRegistryAuth([]byte(c.file))
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("ParseRegistryAuth = %+v, %v; want %+v", got, err, c.want)
			}
			for host, w := range c.want {
				if got[host] != w {
					t.Errorf("%s: %+v, want %+v", host, got[host], w)
				}
			}
		})
	}
	bad := map[string]struct{ file, say string }{
		"not json":          {`auths: {}`, "not Docker's config.json shape"},
		"unknown key":       {`{"auths": {}, "credsStore": "` + secret + `"}`, `unknown field "credsStore"`},
		"unknown entry key": {`{"auths": {"ghcr.io": {"auth": "` + b64("robot:"+secret) + `", "email": "` + secret + `"}}}`, `unknown field "email"`},
		"auth not base64":   {`{"auths": {"ghcr.io": {"auth": "` + secret + `!"}}}`, "auths.ghcr.io.auth: not base64 of USER:PASSWORD"},
		"auth no colon":     {`{"auths": {"ghcr.io": {"auth": "` + b64(secret) + `"}}}`, "auths.ghcr.io.auth: not base64 of USER:PASSWORD"},
		"no credentials":    {`{"auths": {"ghcr.io": {}}}`, "auths.ghcr.io: no credentials"},
		"user only":         {`{"auths": {"ghcr.io": {"username": "robot"}}}`, "auths.ghcr.io: no credentials"},
		"named twice":       {`{"auths": {"ghcr.io": {"identitytoken": "` + secret + `"}, "https://GHCR.io/": {"identitytoken": "` + secret + `"}}}`, "ghcr.io is named twice"},
		"bad registry":      {`{"auths": {"not a host": {"identitytoken": "` + secret + `"}}}`, "is not a host"},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := docker.ParseRegistryAuth([]byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.say) {
				t.Fatalf("err = %v; want one saying %q", err, c.say)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), b64(secret)) {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

func TestLoadRegistryAuth(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(name, []byte(`{"auths": {"ghcr.io": {}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := docker.LoadRegistryAuth(name); err == nil || !strings.HasPrefix(err.Error(), name+": ") {
		t.Errorf("a bad file: %v; want an error naming it", err)
	}
	if _, err := docker.LoadRegistryAuth(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "read the registry credentials") {
		t.Errorf("a missing file: %v", err)
	}
}
