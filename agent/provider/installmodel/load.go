package installmodel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/agent/provider"
)

// file is the shape of a single file: every installation under one key.
//
//	installations:
//	  12345678:
//	    model: openai:gpt-4.1
//	    openai: {api_key: sk-…}
type file struct {
	Installations map[int64]Entry `yaml:"installations"`
}

// Load reads path: a YAML file holding `installations:`, or a directory
// holding one file per installation, named by its ID (12345678, or
// 12345678.yaml), holding that installation's entry alone, as a
// Kubernetes Secret mounts its keys. Names that start with a dot (the
// mount's own ..data links) are skipped. Every entry is checked against
// prices (Entry.check). A file readable by every user is refused: it
// holds keys. Errors name the file and what is wrong, never a key.
func Load(path string, prices provider.Prices) (Set, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	set := Set{}
	if info.IsDir() {
		err = loadDir(path, set)
	} else {
		err = loadFile(path, info, set)
	}
	if err != nil {
		return nil, err
	}
	for _, id := range set.IDs() {
		if err := set[id].check(prices); err != nil {
			return nil, fmt.Errorf("%s: installation %d: %w", path, id, err)
		}
	}
	return set, nil
}

// loadFile reads a single file of `installations:`.
func loadFile(path string, info os.FileInfo, set Set) error {
	var f file
	if err := readStrict(path, info, &f); err != nil {
		return err
	}
	for id, e := range f.Installations {
		if id <= 0 {
			return fmt.Errorf("%s: installation %d: not an installation ID", path, id)
		}
		set[id] = e
	}
	return nil
}

// loadDir reads a directory of one file per installation.
func loadDir(dir string, set Set) error {
	names, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range names {
		if strings.HasPrefix(d.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, d.Name())
		info, err := os.Stat(path) // follows the mount's links
		if err != nil {
			return err
		}
		if info.IsDir() {
			return fmt.Errorf("%s: a directory; want one file per installation, named by its ID", path)
		}
		base := strings.TrimSuffix(strings.TrimSuffix(d.Name(), ".yaml"), ".yml")
		id, err := strconv.ParseInt(base, 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("%s: name the file by its installation ID, e.g. 12345678.yaml", path)
		}
		var e Entry
		if err := readStrict(path, info, &e); err != nil {
			return err
		}
		set[id] = e
	}
	return nil
}

// readStrict checks path's mode and decodes it into v, unknown keys
// being errors.
func readStrict(path string, info os.FileInfo, v any) error {
	if perm := info.Mode().Perm(); perm&0o004 != 0 {
		return fmt.Errorf("%s: readable by every user (mode %#o) though it holds API keys: chmod o-r it (in Kubernetes, the Secret volume's defaultMode: 0440)", path, perm)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %s", path, yamlWhere(err))
	}
	return nil
}

var (
	unknownKey = regexp.MustCompile(`line (\d+): field (\S+) not found`)
	atLine     = regexp.MustCompile(`line (\d+)`)
)

// yamlWhere says where and what a YAML error is without quoting the
// file: yaml's own messages quote values, and a value may be a key.
func yamlWhere(err error) string {
	msg := err.Error()
	if m := unknownKey.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("line %s: unknown key %s (known: model, fallback, summary_model, review_model, openai, anthropic; under each provider api_key, base_url)", m[1], m[2])
	}
	if m := atLine.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("line %s: not the expected shape (see docs/models.md)", m[1])
	}
	return "not YAML of the expected shape (see docs/models.md)"
}
