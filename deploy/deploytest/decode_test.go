package deploytest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// scheme knows the API groups idforge's manifests use.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// strict decodes YAML or JSON into the scheme's types, failing on unknown
// and duplicate fields.
var strict = serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()

// ServiceMonitor is the part of the Prometheus Operator's
// monitoring.coreos.com/v1 ServiceMonitor the chart writes. The operator's
// Go types are not a module this one can use, so the chart's object is
// decoded strictly into this subset: a field the chart writes that is not
// here (a typo, or a field the operator does not have) fails.
type ServiceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector  metaSelector `json:"selector"`
		Endpoints []struct {
			Port      string `json:"port"`
			Path      string `json:"path"`
			Interval  string `json:"interval"`
			Scheme    string `json:"scheme"`
			TLSConfig *struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type metaSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// decodeAll splits a multi-document YAML stream and decodes each object
// strictly: the scheme's types, or ServiceMonitor. Empty documents (a
// template that rendered nothing) are skipped.
func decodeAll(src string) ([]any, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(src)))
	var out []any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, err := decodeOne(doc)
		if err != nil {
			return nil, fmt.Errorf("%w\n---\n%s", err, doc)
		}
		out = append(out, obj)
	}
}

func decodeOne(doc []byte) (any, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	if head.APIVersion == "monitoring.coreos.com/v1" && head.Kind == "ServiceMonitor" {
		var sm ServiceMonitor
		if err := yaml.UnmarshalStrict(doc, &sm); err != nil {
			return nil, fmt.Errorf("ServiceMonitor: %w", err)
		}
		return &sm, nil
	}
	obj, gvk, err := strict.Decode(doc, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", head.APIVersion, head.Kind, err)
	}
	if gvk.Kind != head.Kind {
		return nil, fmt.Errorf("decoded %s as %s", head.Kind, gvk.Kind)
	}
	return obj, nil
}

// stripComments drops comment-only lines and document separators, so that
// a document holding only a comment counts as empty.
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(line); t == "" || t == "---" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.Bytes()
}
