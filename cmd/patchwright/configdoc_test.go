package main

import (
	"errors"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/configuration.md from the flag definitions")

const (
	configDoc      = "../../docs/configuration.md"
	generatedBegin = "<!-- generated from cmd/patchwright's flags: go test ./cmd/patchwright -run TestConfigurationDoc -update-docs -->\n"
	generatedEnd   = "<!-- end of generated table -->\n"
)

// flagEntry is one line pair of flag.PrintDefaults: name, usage, the
// [ENV] suffix parseConfig adds, and the default.
var flagEntry = regexp.MustCompile(`(?m)^  -(\S+)(?: \S+)?\n\s*\t(.*?) \[([A-Z0-9_]+)\](?: \(default (.*)\))?$`)

// configTable renders the settings serve and worker read, from their own
// flag definitions, with no PATCHWRIGHT_ variable set (a set one would
// show as the default).
func configTable(t *testing.T) string {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "PATCHWRIGHT_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	var b strings.Builder
	b.WriteString("| variable | flag | default | meaning |\n|---|---|---|---|\n")
	var usage strings.Builder
	if _, err := parseConfig("serve", []string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve -h: %v", err)
	}
	entries := flagEntry.FindAllStringSubmatch(usage.String(), -1)
	if len(entries) < 10 {
		t.Fatalf("read %d settings from serve's usage:\n%s", len(entries), usage.String())
	}
	for _, e := range entries {
		def := e[4]
		if def == "" {
			def = "—"
		} else {
			def = "`" + strings.Trim(def, `"`) + "`"
		}
		b.WriteString("| `" + e[3] + "` | `--" + e[1] + "` | " + def + " | " + strings.ReplaceAll(e[2], "|", `\|`) + " |\n")
	}
	return b.String()
}

// TestConfigurationDoc fails when docs/configuration.md's table is not
// what the flag definitions say; -update-docs rewrites it.
func TestConfigurationDoc(t *testing.T) {
	table := configTable(t)
	b, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, generatedBegin), strings.Index(doc, generatedEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-table markers", configDoc)
	}
	got := doc[i+len(generatedBegin) : j]
	if got == table {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(configDoc, []byte(doc[:i+len(generatedBegin)]+table+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is out of date with the flags; run go test ./cmd/patchwright -run TestConfigurationDoc -update-docs\nwant:\n%s", configDoc, table)
}
