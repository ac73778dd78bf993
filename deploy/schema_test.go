package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The manifests' built-in objects are decoded strictly into k8s.io/api's
// types, as an API server with kubectl's default field validation
// (strict) would: a misspelled or unknown field, a duplicate key or a
// value of the wrong type is an error rather than a field silently
// dropped. KEDA's ScaledObject is checked against the openAPIV3Schema of
// KEDA's own CRD, copied into testdata/ (testdata/SOURCES.md).

// builtin is the scheme of the groups a manifest here may use. A kind
// outside it and outside keda.sh is refused: add its group here first.
var builtin = sync.OnceValue(func() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, networkingv1.AddToScheme,
		policyv1.AddToScheme, rbacv1.AddToScheme, autoscalingv2.AddToScheme,
		batchv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
})

const kedaCRD = "testdata/keda.sh_scaledobjects.yaml"

// scaledObjectSchema compiles the CRD's schema for each version it serves.
var scaledObjectSchema = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	b, err := os.ReadFile(kedaCRD)
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Group    string `json:"group"`
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	// Only the parts the check needs: not strict.
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", kedaCRD, err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.RegisterFormat(&jsonschema.Format{Name: "int32", Validate: int32Format})
		c.AssertFormat()
		url := "file:///" + kedaCRD + "/" + v.Name
		if err := c.AddResource(url, structural(v.Schema.OpenAPIV3Schema, true)); err != nil {
			return nil, err
		}
		sch, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kedaCRD, v.Name, err)
		}
		out[crd.Spec.Group+"/"+v.Name] = sch
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no served version with a schema", kedaCRD)
	}
	return out, nil
})

// structural turns a CRD's OpenAPI schema into the JSON Schema the API
// server applies. An object with properties is closed (additionalProperties
// false) unless it preserves unknown fields: the server's strict field
// validation refuses an unknown field there. An int-or-string is an
// integer or a string. The other x-kubernetes-* keys are dropped; their
// CEL rules (x-kubernetes-validations) are not evaluated here.
// The root's metadata is ObjectMeta, decoded strictly by checkScaledObject.
func structural(s map[string]any, root bool) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		if strings.HasPrefix(k, "x-kubernetes-") {
			continue
		}
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				props[name] = structural(p.(map[string]any), false)
			}
			out[k] = props
		case "items":
			out[k] = structural(v.(map[string]any), false)
		case "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				v = structural(m, false)
			}
			out[k] = v
		case "anyOf", "allOf", "oneOf":
			var subs []any
			for _, sub := range v.([]any) {
				subs = append(subs, structural(sub.(map[string]any), false))
			}
			out[k] = subs
		case "not":
			out[k] = structural(v.(map[string]any), false)
		default:
			out[k] = v
		}
	}
	if s["x-kubernetes-int-or-string"] == true && s["anyOf"] == nil {
		out["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	}
	_, open := s["additionalProperties"]
	if s["x-kubernetes-preserve-unknown-fields"] == true {
		open = true
	}
	if s["properties"] != nil && !open {
		out["additionalProperties"] = false
	}
	return out
}

// int32Format is OpenAPI's int32: an integer that fits 32 bits.
func int32Format(v any) error {
	n, ok := v.(json.Number)
	if !ok {
		return nil // not a number: the type keyword answers
	}
	i, err := n.Int64()
	if err != nil || i < math.MinInt32 || i > math.MaxInt32 {
		return fmt.Errorf("%s is not a 32-bit integer", n)
	}
	return nil
}

// checkDocument checks one manifest document: a built-in kind by a strict
// decode, a keda.sh kind against KEDA's CRD. An empty document (comments
// only) passes.
func checkDocument(doc []byte) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return nil
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return err
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return errors.New("a document without apiVersion or kind")
	}
	if strings.HasPrefix(tm.APIVersion, "keda.sh/") {
		return checkScaledObject(tm, j)
	}
	_, _, err = builtin().Decode(j, nil, nil)
	return err
}

// checkScaledObject validates a KEDA object against its CRD's schema, and
// its metadata strictly as the ObjectMeta the server decodes it into.
func checkScaledObject(tm metav1.TypeMeta, j []byte) error {
	if tm.Kind != "ScaledObject" {
		return fmt.Errorf("%s %s: only ScaledObject's CRD is in testdata/", tm.APIVersion, tm.Kind)
	}
	schemas, err := scaledObjectSchema()
	if err != nil {
		return err
	}
	sch, ok := schemas[tm.APIVersion]
	if !ok {
		return fmt.Errorf("KEDA's CRD serves no version %s", tm.APIVersion)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	if err := sch.Validate(inst); err != nil {
		return err
	}
	var top struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(j, &top); err != nil {
		return err
	}
	var meta metav1.ObjectMeta
	if err := yaml.UnmarshalStrict(top.Metadata, &meta); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	return nil
}

// documents splits a YAML file into its documents, as kubectl does.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, doc)
	}
}

// TestManifestsMatchTheirSchemas checks every document under kubernetes/
// against the API types or KEDA's CRD, and that the ScaledObject is among
// them.
func TestManifestsMatchTheirSchemas(t *testing.T) {
	scaled := 0
	err := filepath.WalkDir("kubernetes", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		for i, doc := range documents(t, path) {
			if err := checkDocument(doc); err != nil {
				t.Errorf("%s, document %d: %v", path, i+1, err)
			}
			if bytes.Contains(doc, []byte("\nkind: ScaledObject\n")) {
				scaled++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scaled == 0 {
		t.Error("no ScaledObject checked against KEDA's CRD")
	}
}

// document returns the document of path whose kind line is kind.
func document(t *testing.T, path, kind string) string {
	t.Helper()
	for _, doc := range documents(t, path) {
		if bytes.Contains(doc, []byte("\nkind: "+kind+"\n")) {
			return string(doc)
		}
	}
	t.Fatalf("%s has no %s", path, kind)
	return ""
}

// TestSchemaCheckRefuses spoils the real manifests one field at a time:
// each must be refused, with the field named.
func TestSchemaCheckRefuses(t *testing.T) {
	scaled := document(t, "kubernetes/keda.yaml", "ScaledObject")
	deployment := document(t, "kubernetes/worker.yaml", "Deployment")
	service := document(t, "kubernetes/serve.yaml", "Service")
	for _, tc := range []struct {
		name, doc, old, new, want string
	}{
		{"ScaledObject misspelled field", scaled, "maxReplicaCount: 20", "maxReplicaCout: 20", "maxReplicaCout"},
		{"ScaledObject count as a string", scaled, "maxReplicaCount: 20", `maxReplicaCount: "20"`, "maxReplicaCount"},
		{"ScaledObject count past int32", scaled, "maxReplicaCount: 20", "maxReplicaCount: 4294967296", "maxReplicaCount"},
		{"ScaledObject metadata value not a string", scaled, `databaseIndex: "0"`, "databaseIndex: 0", "databaseIndex"},
		{"ScaledObject trigger without type", scaled, "- type: redis\n", "- name: redis\n", "type"},
		{"ScaledObject misspelled nested field", scaled, "stabilizationWindowSeconds:", "stabilisationWindowSeconds:", "stabilisationWindowSeconds"},
		{"ScaledObject authentication kind outside its enum", scaled, "    - type: redis\n      metadata:", "    - type: redis\n      authenticationRef: {kind: Secret, name: redis}\n      metadata:", "authenticationRef/kind"},
		{"ScaledObject misspelled metadata", scaled, "  namespace: patchwright", "  namespce: patchwright", "namespce"},
		{"ScaledObject version KEDA does not serve", scaled, "keda.sh/v1alpha1", "keda.sh/v1", "v1"},
		{"Deployment misspelled field", deployment, "  replicas:", "  replica:", "replica"},
		{"Deployment misspelled container field", deployment, "livenessProbe:", "livenesProbe:", "livenesProbe"},
		{"Deployment replicas as a string", deployment, "replicas: 2", `replicas: "2"`, "replicas"},
		{"Service misspelled port field", service, "targetPort:", "targetPrt:", "targetPrt"},
		{"unknown kind", service, "kind: Service", "kind: Servce", "Servce"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.doc, tc.old) {
				t.Fatalf("the manifest no longer has %q: update this case", tc.old)
			}
			err := checkDocument([]byte(strings.Replace(tc.doc, tc.old, tc.new, 1)))
			if err == nil {
				t.Fatalf("%q for %q was accepted", tc.new, tc.old)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not name %q: %v", tc.want, err)
			}
		})
	}
}
