package docker

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/registry"
)

// RegistryHost is a registry named as an operator may write it ("ghcr.io",
// "https://index.docker.io/v1/", "registry.example.com:5000") in the
// form image references resolve to: lower case, no scheme or path, and
// Docker Hub's several names as "docker.io". It returns an error for
// what is not a host or host:port.
func RegistryHost(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	switch h {
	case "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return "docker.io", nil
	}
	name := h
	if host, port, err := net.SplitHostPort(h); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("registry %q: %q is not a port", s, port)
		}
		name = strings.Trim(host, "[]")
	}
	if !hostRE.MatchString(name) && net.ParseIP(name) == nil {
		return "", fmt.Errorf("registry %q is not a host or host:port, such as ghcr.io or registry.example.com:5000", s)
	}
	return h, nil
}

// hostRE is a DNS name: labels of letters, digits and '-', dot-separated.
var hostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// ParseRegistries reads a comma- or space-separated list of registries
// (RegistryHost), sorted and without repeats.
func ParseRegistries(list string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(list, func(c rune) bool { return c == ',' || c == ' ' }) {
		h, err := RegistryHost(f)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// LoadRegistryAuth reads the operator's registry credentials file
// (ParseRegistryAuth); errors name the file, never a secret.
func LoadRegistryAuth(name string) (map[string]registry.AuthConfig, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read the registry credentials: %w", err)
	}
	auth, err := ParseRegistryAuth(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return auth, nil
}

// authFile is the part of Docker's config.json the operator's registry
// credentials file holds.
type authFile struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
	} `json:"auths"`
}

// ParseRegistryAuth reads credentials in the shape of Docker's
// config.json ({"auths": {"ghcr.io": {"auth": base64("user:token")}}};
// "username" and "password", or "identitytoken", also do), keyed by
// RegistryHost. Errors name the registry, never a secret.
func ParseRegistryAuth(data []byte) (map[string]registry.AuthConfig, error) {
	var f authFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not Docker's config.json shape ({\"auths\": {REGISTRY: {\"auth\": …}}}): %v", err)
	}
	out := make(map[string]registry.AuthConfig, len(f.Auths))
	for key, a := range f.Auths {
		host, err := RegistryHost(key)
		if err != nil {
			return nil, err
		}
		c := registry.AuthConfig{Username: a.Username, Password: a.Password, IdentityToken: a.IdentityToken, ServerAddress: host}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			user, pass, ok := strings.Cut(string(raw), ":")
			if err != nil || !ok {
				return nil, fmt.Errorf("auths.%s.auth: not base64 of USER:PASSWORD", key)
			}
			c.Username, c.Password = user, pass
		}
		if c.IdentityToken == "" && (c.Username == "" || c.Password == "") {
			return nil, fmt.Errorf("auths.%s: no credentials (want auth, username and password, or identitytoken)", key)
		}
		if _, dup := out[host]; dup {
			return nil, fmt.Errorf("auths: %s is named twice", host)
		}
		out[host] = c
	}
	return out, nil
}
