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
