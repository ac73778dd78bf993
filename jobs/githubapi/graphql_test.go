package githubapi

import (
	"net/url"
	"testing"
)

func TestGraphQLPath(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.github.com/":       "https://api.github.com/graphql",
		"https://ghe.example/api/v3/":   "https://ghe.example/api/graphql",
		"http://127.0.0.1:4321/":        "http://127.0.0.1:4321/graphql",
		"http://127.0.0.1:4321/github/": "http://127.0.0.1:4321/github/graphql",
	} {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		got, err := u.Parse(graphqlPath(u))
		if err != nil || got.String() != want {
			t.Errorf("GraphQL beside %s = %v, %v; want %s", base, got, err, want)
		}
	}
}

// TestUploadURL: beside GHES's /api/v3/ uploads go to its /api/uploads/,
// never to uploads.github.com; github.com keeps go-github's default.
func TestUploadURL(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.github.com/":     "https://uploads.github.com/",
		"https://ghe.example/api/v3/": "https://ghe.example/api/uploads/",
	} {
		c, err := newClient(nil, base)
		if err != nil || c.UploadURL.String() != want {
			t.Errorf("uploads beside %s = %v, %v; want %s", base, c.UploadURL, err, want)
		}
	}
}
