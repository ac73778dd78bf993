package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/patchwright/patchwright/internal/text"
)

// tool is a Tool whose parameters are the struct P. P is the only source of
// the JSON schema, of the shape shown in invalid_arguments hints, and of
// which fields are required (those whose json tag lacks omitempty).
type tool[P any] struct {
	name   string
	desc   string
	schema json.RawMessage
	shape  string
	call   func(ctx context.Context, p P) (Result, error)
}

func newTool[P any](name, desc string, call func(context.Context, P) (Result, error)) *tool[P] {
	t := reflect.TypeFor[P]()
	return &tool[P]{
		name:   name,
		desc:   strings.TrimSpace(desc),
		schema: schemaFor(t),
		shape:  shapeOf(t),
		call:   call,
	}
}

func (t *tool[P]) Name() string            { return t.name }
func (t *tool[P]) Description() string     { return t.desc }
func (t *tool[P]) Schema() json.RawMessage { return append(json.RawMessage(nil), t.schema...) }

// Call decodes the arguments strictly and runs the tool. Arguments that do
// not fit P are a result the model can act on, never a Go error.
func (t *tool[P]) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var p P
	if err := decodeStrict(args, &p); err != nil {
		return fail(InvalidArguments, fmt.Sprintf("%s: %v", t.name, err),
			"send a JSON object shaped like "+t.shape), nil
	}
	return t.call(ctx, p)
}

// decodeStrict unmarshals one JSON object into v, refusing unknown fields,
// trailing data and missing required fields. Empty or null arguments count
// as {} because some providers send that for a tool without parameters.
func decodeStrict(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments are not valid: %v", err)
	}
	if dec.More() {
		return fmt.Errorf("arguments have data after the JSON object")
	}
	var raw any
	if err := json.Unmarshal(args, &raw); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	return checkRequired(reflect.TypeOf(v).Elem(), raw, "")
}

// checkRequired reports the first required field missing (or null) in raw,
// descending into nested structs and lists of structs.
func checkRequired(t reflect.Type, raw any, at string) error {
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be a JSON object", orArguments(at))
		}
		for i := range t.NumField() {
			name, required := jsonField(t.Field(i))
			if name == "" {
				continue
			}
			val, present := obj[name]
			if !present || val == nil {
				if required {
					return fmt.Errorf("missing required field %q", at+name)
				}
				continue
			}
			if err := checkRequired(t.Field(i).Type, val, at+name); err != nil {
				return err
			}
		}
	case reflect.Slice:
		list, _ := raw.([]any)
		for i, item := range list {
			if err := checkRequired(t.Elem(), item, fmt.Sprintf("%s[%d].", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func orArguments(at string) string {
	if at == "" {
		return "arguments"
	}
	return strings.TrimSuffix(at, ".")
}

// jsonField returns a field's JSON name ("" when not serialised) and
// whether it is required: it is unless its tag says omitempty.
func jsonField(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, !strings.Contains(","+opts+",", ",omitempty,")
}

// schemaFor derives the JSON schema of a parameter struct: an inline object
// with no $ref, no $schema and no additional properties, which every
// provider accepts.
func schemaFor(t reflect.Type) json.RawMessage {
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	if s.Properties == nil || s.Properties.Len() == 0 {
		// OpenAI wants "properties" even for a tool without parameters.
		return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	b, err := json.Marshal(s)
	if err != nil {
		// A parameter struct is static; this is a programming error that
		// the schema tests catch.
		panic(fmt.Sprintf("tools: schema of %s: %v", t, err))
	}
	return b
}

// shapeOf renders a parameter struct as a compact example for hints, for
// example {"path": string, "start_line"?: integer}.
func shapeOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		var parts []string
		for i := range t.NumField() {
			name, required := jsonField(t.Field(i))
			if name == "" {
				continue
			}
			opt := "?"
			if required {
				opt = ""
			}
			parts = append(parts, fmt.Sprintf("%q%s: %s", name, opt, shapeOf(t.Field(i).Type)))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Slice:
		return "[" + shapeOf(t.Elem()) + ", ...]"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Bool:
		return "boolean"
	default:
		return t.Kind().String()
	}
}

// fail builds a failed result: "error: CODE: what happened" and, on the
// next line, one hint how to recover (docs/design.md §4.4).
func fail(code Code, what, hint string) Result {
	return Result{Code: code, Text: fmt.Sprintf("error: %s: %s\nhint: %s", code, oneLine(what), oneLine(hint))}
}

// oneLine keeps a message on one line so the hint stays the second line.
func oneLine(s string) string {
	return text.Line(s)
}
