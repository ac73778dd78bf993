package main

import (
	"cmp"
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/configuration.md from the flag definitions")

const (
	configDoc      = "../../docs/configuration.md"
	generatedBegin = "<!-- generated from cmd/patchwright's flags: go test ./cmd/patchwright -run TestConfigurationDoc -update-docs -->\n"
	generatedEnd   = "<!-- end of generated table -->\n"
)

// configTable renders the settings serve and worker read, from the
// table their flags and help come from, one table per group as help
// groups them.
func configTable(t *testing.T) string {
	t.Helper()
	var raw rawConfig
	settings := raw.table()
	var b strings.Builder
	for _, g := range settingGroups {
		b.WriteString("\n### " + g + "\n\n| variable | flag | type | default | meaning |\n|---|---|---|---|---|\n")
		n := 0
		for _, s := range settings {
			if s.group != g {
				continue
			}
			n++
			def := "—"
			if d := s.defaultText(); d != "" {
				def = d
			}
			b.WriteString("| `" + s.env + "` | `--" + s.flag + "` | " + cmp.Or(s.kind, "string") + " | " + def + " | " + strings.ReplaceAll(s.usage, "|", `\|`) + " |\n")
		}
		if n == 0 {
			t.Errorf("group %q has no settings", g)
		}
	}
	if len(settings) < 30 {
		t.Fatalf("the table has %d settings", len(settings))
	}
	return b.String() + "\n"
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
