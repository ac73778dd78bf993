package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseLayered(t *testing.T) {
	org := []byte("draft: always\nexclude: [customer-data/]\nlimits: {max_steps: 10, max_minutes: 5}\nreviewers: [platform-bot]\n")
	repo := []byte("limits: {max_steps: 20}\nreviewers: [octocat]\nprotected_paths: [\"migrations/**\"]\n")
	c, err := ParseLayered(org, repo)
	if err != nil {
		t.Fatal(err)
	}
	// The repository's keys win whole (limits is the repository's, so
	// max_minutes is the default, not the organisation's 5).
	if c.Limits.MaxSteps != 20 || c.Limits.MaxMinutes != DefaultMaxMinutes || !reflect.DeepEqual(c.Reviewers, []string{"octocat"}) {
		t.Errorf("repository keys: %+v %q", c.Limits, c.Reviewers)
	}
	if c.Draft != DraftAlways || !reflect.DeepEqual(c.Exclude, []string{"customer-data/"}) || !reflect.DeepEqual(c.ProtectedPaths, []string{"migrations/**"}) {
		t.Errorf("organisation keys: draft %q exclude %q protected %q", c.Draft, c.Exclude, c.ProtectedPaths)
	}
	if c, err := ParseLayered(org, nil); err != nil || c.Draft != DraftAlways || c.Limits.MaxMinutes != 5 {
		t.Errorf("no repository file: %+v, %v; want the organisation's", c, err)
	}
	if c, err := ParseLayered(org, []byte("# nothing yet\n")); err != nil || c.Draft != DraftAlways {
		t.Errorf("empty repository file: %+v, %v; want the organisation's", c, err)
	}
	if c, err := ParseLayered(nil, repo); err != nil || c.Draft != DefaultDraft || c.Limits.MaxSteps != 20 {
		t.Errorf("no organisation file: %+v, %v", c, err)
	}
	if c, err := ParseLayered(nil, nil); err != nil || !reflect.DeepEqual(c, Default()) {
		t.Errorf("neither: %+v, %v", c, err)
	}
	if _, err := ParseLayered([]byte("colour: red\n"), repo); err == nil || !strings.Contains(err.Error(), "the organisation's default .github/.github/agent.yml") {
		t.Errorf("bad organisation file: %v", err)
	}
	if _, err := ParseLayered(org, []byte("draft: sometimes\n")); err == nil || strings.Contains(err.Error(), "organisation") {
		t.Errorf("bad repository file: %v, want it named alone", err)
	}
}
