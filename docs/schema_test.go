package docs

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/jobs/pipeline"
	"github.com/patchwright/patchwright/verify"
	"github.com/patchwright/patchwright/verify/findings"
)

// compile compiles one of docs/schema/'s schemas as draft 2020-12.
func compile(t *testing.T, name string) (*jsonschema.Schema, map[string]any) {
	t.Helper()
	raw := read(t, "docs/schema/"+name)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "file:///docs/schema/" + name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sch, doc.(map[string]any)
}

// validate checks a JSON document against sch.
func validate(sch *jsonschema.Schema, j []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// yamlToJSON turns an agent.yml into the JSON the schema is checked
// against, as editors' YAML language servers do.
func yamlToJSON(t *testing.T, y string) []byte {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(y), &v); err != nil {
		t.Fatalf("yaml: %v\n%s", err, y)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// agentYMLExamples is every agent.yml the repository holds (the eval
// tasks' repositories) and every example of one in the docs.
func agentYMLExamples(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && filepath.Base(filepath.Dir(p)) == ".github" && (d.Name() == "agent.yml" || d.Name() == "agent.yaml") {
			rel, _ := filepath.Rel(root, p)
			out[rel] = read(t, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	for _, page := range []string{"README.md", "docs/agent-yml.md"} {
		for i, m := range block.FindAllStringSubmatch(read(t, page), -1) {
			out[page+"#"+string(rune('1'+i))] = m[1]
		}
	}
	design := read(t, "docs/design.md")
	start := strings.Index(design, "### 4.3")
	if m := block.FindStringSubmatch(design[start:]); start >= 0 && m != nil {
		out["docs/design.md §4.3"] = m[1]
	}
	return out
}

// TestAgentYMLSchemaAcceptsEveryExample: every agent.yml in the
// repository and the docs is accepted by the parser and by the schema.
func TestAgentYMLSchemaAcceptsEveryExample(t *testing.T) {
	sch, _ := compile(t, "agent-yml.json")
	examples := agentYMLExamples(t)
	if len(examples) < 10 {
		t.Fatalf("found only %d agent.yml examples: %v", len(examples), slices.Collect(maps.Keys(examples)))
	}
	for name, y := range examples {
		if _, err := config.Parse([]byte(y)); err != nil {
			t.Errorf("%s: the parser refuses it: %v", name, err)
		}
		if err := validate(sch, yamlToJSON(t, y)); err != nil {
			t.Errorf("%s: the schema refuses it: %v", name, err)
		}
	}
}

// TestAgentYMLSchemaAgreesWithTheParser: inputs the parser refuses, the
// schema refuses too, so an editor flags them before a run does.
func TestAgentYMLSchemaAgreesWithTheParser(t *testing.T) {
	sch, _ := compile(t, "agent-yml.json")
	for name, y := range map[string]string{
		"unknown key":           "imge: golang\n",
		"unknown limits key":    "limits: {max_step: 3}\n",
		"draft word":            "draft: sometimes\n",
		"ci_fix_attempts high":  "ci_fix_attempts: 11\n",
		"negative limit":        "limits: {max_steps: -1}\n",
		"service name":          "services: [{name: DB, image: postgres}]\n",
		"service without image": "services: [{name: db}]\n",
		"network word":          "network: closed\n",
		"network key":           "network: {deny: [x.example]}\n",
		"allow entry":           "network: {allow: [\"https://x.example/\"]}\n",
		"check without run":     "verify: [{name: test}]\n",
		"setup not a list":      "setup: {a: b}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := config.Parse([]byte(y)); err == nil {
				t.Fatalf("the parser accepts %q; pick an input it refuses", y)
			}
			if err := validate(sch, yamlToJSON(t, y)); err == nil {
				t.Errorf("the parser refuses %q but the schema accepts it", y)
			}
		})
	}
}

// tagKeys are a struct's field names under tag (yaml or json).
func tagKeys(typ reflect.Type, tag string) []string {
	var out []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get(tag), ",")
		if f.Anonymous && name == "" {
			out = append(out, tagKeys(f.Type, tag)...)
			continue
		}
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// props is a schema object's property names, at a path of property
// names (an array's items are followed through).
func props(t *testing.T, schema map[string]any, path ...string) []string {
	t.Helper()
	node := schema
	for _, p := range path {
		next, ok := node["properties"].(map[string]any)[p].(map[string]any)
		if !ok {
			t.Fatalf("schema has no property %s", strings.Join(path, "."))
		}
		if items, ok := next["items"].(map[string]any); ok {
			next = items
		}
		if one, ok := next["oneOf"].([]any); ok {
			for _, o := range one {
				if m, ok := o.(map[string]any); ok && m["properties"] != nil {
					next = m
				}
			}
		}
		node = next
	}
	var out []string
	for k := range node["properties"].(map[string]any) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestAgentYMLSchemaKeys: the schema's keys are the parser's, at every
// level.
func TestAgentYMLSchemaKeys(t *testing.T) {
	_, schema := compile(t, "agent-yml.json")
	for _, c := range []struct {
		path []string
		typ  reflect.Type
	}{
		{nil, reflect.TypeFor[config.Config]()},
		{[]string{"limits"}, reflect.TypeFor[config.Limits]()},
		{[]string{"services"}, reflect.TypeFor[config.Service]()},
		{[]string{"verify"}, reflect.TypeFor[config.Check]()},
		{[]string{"schedules"}, reflect.TypeFor[config.Schedule]()},
	} {
		where := "agent-yml.json " + strings.Join(c.path, ".")
		diff(t, "key", c.typ.String(), where, tagKeys(c.typ, "yaml"), props(t, schema, c.path...))
	}
	diff(t, "key", "config.Egress", "agent-yml.json network", []string{"allow"}, props(t, schema, "network"))
}

// TestResultSchemaKeys: the schema's keys are the JSON keys of the types
// the pipeline writes result.json from.
func TestResultSchemaKeys(t *testing.T) {
	_, schema := compile(t, "result.json")
	for _, c := range []struct {
		path []string
		typ  reflect.Type
	}{
		{nil, reflect.TypeFor[pipeline.Result]()},
		{[]string{"checks"}, reflect.TypeFor[pipeline.CheckSummary]()},
		{[]string{"findings"}, reflect.TypeFor[findings.Finding]()},
		{[]string{"usage"}, reflect.TypeFor[ledger.Usage]()},
	} {
		where := "result.json " + strings.Join(c.path, ".")
		diff(t, "key", c.typ.String(), where, tagKeys(c.typ, "json"), props(t, schema, c.path...))
	}
}

// findingKinds are the kinds the code makes: verify/findings' own, and
// those of the pipeline's other steps.
var findingKinds = []string{
	findings.TestsRemoved, findings.TestSkipped, findings.AssertionChanged,
	findings.OnlyTestsChanged, findings.NoTestsRan, findings.NewDependency,
	findings.Scope, findings.HarnessChanged, findings.UntrustedSetup,
	pipeline.KindProtectedPath, pipeline.KindLargeFile, pipeline.KindCommandOutput, "secret",
	findings.Advisory, findings.AdvisoryLow, findings.Security,
	findings.Injection, findings.Behaviour, findings.ReviewFailed,
}

// TestResultSchemaAcceptsWhatTheCodeWrites marshals results built with
// the pipeline's own types, one per outcome and with every finding kind,
// and validates them.
func TestResultSchemaAcceptsWhatTheCodeWrites(t *testing.T) {
	sch, _ := compile(t, "result.json")
	outcomes := []verify.Outcome{verify.Verified, verify.Unverified, verify.Failed, verify.NoChange, verify.Stopped, verify.Error}
	var fs []findings.Finding
	for i, k := range findingKinds {
		fs = append(fs, findings.Finding{Kind: k, Path: "a/b.go", Line: i, Detail: "one sentence."})
	}
	for _, o := range outcomes {
		res := pipeline.Result{
			Outcome: o, Reason: "why", Branch: "agent/issue-7", BaseCommit: "0123abc", HeadCommit: "4567def",
			FilesChanged: []string{"a/b.go"},
			Checks: []pipeline.CheckSummary{
				{Name: "test", Command: "go test ./...", Phase: verify.Baseline, Ran: true, ExitCode: 1, DurationMS: 1200},
				{Name: "test", Command: "go test ./...", Phase: verify.Final, Ran: true, Passed: true, DurationMS: 900},
			},
			NotVerified: []string{"No linter ran."}, Findings: fs, Steps: 9,
			Usage: ledger.Usage{InputTokens: 100, OutputTokens: 10, CachedInputTokens: 50, CacheWriteTokens: 5},
		}
		if o == verify.Verified {
			res.ReplayedFrom = "docs/examples/wordcount.transcript.jsonl"
		}
		j, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(sch, j); err != nil {
			t.Errorf("%s: %v\n%s", o, err, j)
		}
	}
	// A run that changed nothing and found nothing writes empty lists as
	// null (nil slices); the schema takes that too.
	j, err := json.Marshal(pipeline.Result{Outcome: verify.NoChange, Reason: "no change"})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(sch, j); err != nil {
		t.Errorf("an empty no_change result: %v\n%s", err, j)
	}
	if err := validate(sch, []byte(strings.Replace(string(j), `"no_change"`, `"done"`, 1))); err == nil {
		t.Error("the schema accepts an outcome the code does not have")
	}
}

// TestResultSchemaEnums: the outcome and finding-kind enums are exactly
// the code's.
func TestResultSchemaEnums(t *testing.T) {
	_, schema := compile(t, "result.json")
	enum := func(path ...string) []string {
		node := schema
		for _, p := range path {
			node = node["properties"].(map[string]any)[p].(map[string]any)
			if items, ok := node["items"].(map[string]any); ok {
				node = items
			}
		}
		var out []string
		for _, v := range node["enum"].([]any) {
			out = append(out, v.(string))
		}
		return out
	}
	var outcomes []string
	for _, o := range []verify.Outcome{verify.Verified, verify.Unverified, verify.Failed, verify.NoChange, verify.Stopped, verify.Error} {
		outcomes = append(outcomes, string(o))
	}
	diff(t, "outcome", "verify", "result.json", outcomes, enum("outcome"))
	diff(t, "finding kind", "the code", "result.json", findingKinds, enum("findings", "kind"))
}

// TestResultExampleValid: the example on docs/result-json.md is a valid
// result.json.
func TestResultExampleValid(t *testing.T) {
	sch, _ := compile(t, "result.json")
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(read(t, "docs/result-json.md"))
	if m == nil {
		t.Fatal("docs/result-json.md has no ```json example")
	}
	if err := validate(sch, []byte(m[1])); err != nil {
		t.Error(err)
	}
}
