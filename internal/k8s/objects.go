package k8s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// typed sets o's apiVersion and kind, which the API types leave empty.
func typed[T runtime.Object](o T, apiVersion, kind string) T {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		panic(err) // the callers pass constants
	}
	o.GetObjectKind().SetGroupVersionKind(gv.WithKind(kind))
	return o
}

// sortedEnv merges environment maps (later ones win) into sorted EnvVars.
func sortedEnv(maps ...map[string]string) []corev1.EnvVar {
	all := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			all[k] = v
		}
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]corev1.EnvVar, len(keys))
	for i, k := range keys {
		out[i] = corev1.EnvVar{Name: k, Value: all[k]}
	}
	return out
}

// WriteYAML writes objs as one multi-document YAML stream, ready for
// kubectl apply -f -. Fields the server fills in (status, a null
// creationTimestamp) are left out.
func WriteYAML(w io.Writer, objs []Object) error {
	var buf bytes.Buffer
	for i, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		prune(m)
		y, err := yaml.Marshal(m)
		if err != nil {
			return err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// prune drops what the server fills in: status and null creationTimestamps.
func prune(m map[string]any) {
	delete(m, "status")
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			if k == "creationTimestamp" {
				delete(m, k)
			}
		case map[string]any:
			prune(v)
			if len(v) == 0 && (k == "metadata" || k == "resources" || k == "strategy" || k == "updateStrategy" || k == "spec") {
				delete(m, k)
			}
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
