package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// OrgPath names an organisation's default configuration in errors: the
// file Path of the organisation's `.github` repository, default branch.
const OrgPath = ".github/" + Path

// ParseLayered parses a repository's .github/agent.yml over its
// organisation's default (the same file in the organisation's `.github`
// repository): each top-level key the repository's file sets wins
// whole, and the others come from the organisation's. Either may be nil
// (absent). Each file is checked alone first, so an error names the
// file it is in.
func ParseLayered(org, repo []byte) (Config, error) {
	if org == nil {
		if repo == nil {
			return Default(), nil
		}
		return Parse(repo)
	}
	if _, err := Parse(org); err != nil {
		return Config{}, fmt.Errorf("the organisation's default %s: %w", OrgPath, err)
	}
	if repo == nil {
		return Parse(org)
	}
	if _, err := Parse(repo); err != nil {
		return Config{}, err
	}
	merged, err := mergeTop(org, repo)
	if err != nil {
		return Config{}, err
	}
	return Parse(merged)
}

// mergeTop is repo's mapping with org's keys that repo lacks added.
func mergeTop(org, repo []byte) ([]byte, error) {
	var o, r yaml.Node
	if err := decodeOne(org, &o); err != nil {
		return nil, err
	}
	if err := decodeOne(repo, &r); err != nil {
		return nil, err
	}
	om, rm := top(&o), top(&r)
	if rm == nil {
		return org, nil // the repository's file is empty
	}
	if om == nil {
		return repo, nil
	}
	has := map[string]bool{}
	for i := 0; i+1 < len(rm.Content); i += 2 {
		has[rm.Content[i].Value] = true
	}
	for i := 0; i+1 < len(om.Content); i += 2 {
		if !has[om.Content[i].Value] {
			rm.Content = append(rm.Content, om.Content[i], om.Content[i+1])
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(rm); err != nil {
		return nil, fmt.Errorf("merge the organisation's default into %s: %w", Path, err)
	}
	return b.Bytes(), enc.Close()
}

func decodeOne(data []byte, n *yaml.Node) error {
	err := yaml.NewDecoder(bytes.NewReader(data)).Decode(n)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// top is a document's top-level mapping; nil for an empty document.
func top(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 && n.Content[0].Kind == yaml.MappingNode {
		return n.Content[0]
	}
	return nil
}
