package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/sandbox"
)

// The schemas are the contract of docs/design.md §4.4: names, parameters and which
// are required.
func TestSchemasMatchTheContract(t *testing.T) {
	contract := map[string]struct{ required, optional []string }{
		"list_files":  {optional: []string{"path", "pattern"}},
		"read_file":   {required: []string{"path"}, optional: []string{"start_line", "end_line"}},
		"search":      {required: []string{"pattern"}, optional: []string{"path", "glob"}},
		"edit":        {required: []string{"edits"}},
		"write_file":  {required: []string{"path", "content"}},
		"delete_file": {required: []string{"path"}},
		"run":         {required: []string{"command"}, optional: []string{"timeout_s"}},
		"verify":      {},
		"finish":      {required: []string{"summary"}},
	}
	env := newEnv(t, nil)
	var names []string
	for _, d := range env.set.Definitions() {
		names = append(names, d.Name)
		want, ok := contract[d.Name]
		if !ok {
			t.Errorf("tool %q is not in the contract", d.Name)
			continue
		}
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
			Ref                  string                     `json:"$ref"`
			Schema               string                     `json:"$schema"`
		}
		if err := json.Unmarshal(d.Schema, &s); err != nil {
			t.Fatalf("%s: schema is not JSON: %v\n%s", d.Name, err, d.Schema)
		}
		if s.Type != "object" || s.Properties == nil || s.Ref != "" || s.Schema != "" {
			t.Errorf("%s: not an inline object schema: %s", d.Name, d.Schema)
		}
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: additionalProperties should be false: %s", d.Name, d.Schema)
		}
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		all := append(slices.Clone(want.required), want.optional...)
		slices.Sort(props)
		slices.Sort(all)
		slices.Sort(s.Required)
		req := slices.Sorted(slices.Values(want.required))
		if !slices.Equal(props, all) || !slices.Equal(s.Required, req) {
			t.Errorf("%s: properties %v required %v, want %v required %v", d.Name, props, s.Required, all, req)
		}
		if len(d.Description) < 80 {
			t.Errorf("%s: description too thin: %q", d.Name, d.Description)
		}
	}
	if want := []string{"list_files", "read_file", "search", "edit", "write_file", "delete_file", "run", "verify", "finish"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	// The edit items carry their own required fields.
	edit, _ := env.set.Lookup("edit")
	if !strings.Contains(string(edit.Schema()), `"required":["path","old_text","new_text"]`) {
		t.Errorf("edit item schema: %s", edit.Schema())
	}
}

func TestInvalidArguments(t *testing.T) {
	tests := map[string]struct {
		tool, args string
		has        string
	}{
		"not JSON":             {"read_file", `{"path": "a.go"`, `expected`},
		"JSON string not obj":  {"read_file", `"a.go"`, `{"path": string, "start_line"?: integer, "end_line"?: integer}`},
		"missing required":     {"read_file", `{"start_line": 1}`, `missing required field "path"`},
		"wrong type":           {"read_file", `{"path": 5}`, `{"path": string`},
		"unknown field":        {"read_file", `{"path": "a", "lines": "1-2"}`, `unknown field "lines"`},
		"trailing data":        {"read_file", `{"path": "a"} {"path": "b"}`, `after the JSON object`},
		"null required":        {"write_file", `{"path": "a", "content": null}`, `missing required field "content"`},
		"nested missing":       {"edit", `{"edits": [{"path": "a", "old_text": "x"}]}`, `missing required field "edits[0].new_text"`},
		"nested not an object": {"edit", `{"edits": ["a"]}`, `{"edits": [{"path": string, "old_text": string, "new_text": string}, ...]}`},
		"edits not a list":     {"edit", `{"edits": {"path": "a"}}`, `cannot unmarshal`},
		"empty for required":   {"search", ``, `missing required field "pattern"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, map[string]string{"a": "x"})
			res := env.call(t, tc.tool, tc.args)
			wantCode(t, res, InvalidArguments)
			if !strings.Contains(res.Text, "send a JSON object shaped like {") {
				t.Errorf("no shape hint:\n%s", res.Text)
			}
			if tc.has != "expected" && !strings.Contains(res.Text, tc.has) {
				t.Errorf("text lacks %q:\n%s", tc.has, res.Text)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	ws, err := sandbox.OpenWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	full := Options{Workspace: ws, Sandbox: &fakeSandbox{}, Verifier: &fakeVerifier{}}
	tests := map[string]func(*Options){
		"no workspace": func(o *Options) { o.Workspace = nil },
		"no sandbox":   func(o *Options) { o.Sandbox = nil },
		"no verifier":  func(o *Options) { o.Verifier = nil },
		"bad glob":     func(o *Options) { o.Protected = []string{"ok/**", "[oops"} },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			o := full
			mutate(&o)
			if s, err := New(o); err == nil {
				t.Fatalf("New accepted it: %v", s)
			}
		})
	}
	if _, err := New(full); err != nil {
		t.Fatal(err)
	}
}
