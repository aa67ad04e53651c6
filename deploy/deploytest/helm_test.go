package deploytest

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	corev1 "k8s.io/api/core/v1"
)

const chartDir = "../helm/idforge"

// render renders the chart with values as "helm install idforge" would,
// and returns the rendered manifests in a stable order.
func render(t *testing.T, ch *chart.Chart, values map[string]any) (string, error) {
	t.Helper()
	vals, err := chartutil.ToRenderValues(ch, values,
		chartutil.ReleaseOptions{Name: "idforge", Namespace: "ids", IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString("---\n# " + name + "\n" + files[name] + "\n")
	}
	return b.String(), nil
}

// renderObjects renders the chart with values and decodes every object
// strictly; it returns them and the rendering.
func renderObjects(t *testing.T, ch *chart.Chart, values map[string]any) (objects, string) {
	t.Helper()
	out, err := render(t, ch, values)
	if err != nil {
		t.Fatal(err)
	}
	all, err := decodeAll(out)
	if err != nil {
		t.Fatal(err)
	}
	return sortObjects(t, all), out
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestChart renders, lints and strictly decodes the chart for every
// documented values file in ci/, and checks each rendering's properties.
func TestChart(t *testing.T) {
	ch := loadChart(t)
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("values files in ci/: %v %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			values, err := chartutil.ReadValuesFile(file)
			if err != nil {
				t.Fatal(err)
			}
			linter := lint.All(chartDir, values, "ids", true)
			for _, m := range linter.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m)
				}
			}
			o, out := renderObjects(t, ch, values)
			merged, _ := chartutil.CoalesceValues(ch, values)
			mode := ordinal
			if merged["mode"] == "deployment" {
				mode = leased
			}
			grpc := merged["ports"].(map[string]any)["grpcEnabled"] == true
			checkDeployment(t, o, mode, grpc)
			checkChartValues(t, o, merged)
			if t.Failed() {
				t.Log(out)
			}
		})
	}
}

// checkChartValues checks what each value must change in the rendering.
func checkChartValues(t *testing.T, o objects, v chartutil.Values) {
	t.Helper()
	pod := podOf(o)
	c := pod.Containers[0]
	sm, _ := v.Table("serviceMonitor")
	if want := sm["enabled"] == true; (len(o.monitors) == 1) != want {
		t.Errorf("serviceMonitor.enabled=%v, %d ServiceMonitors", want, len(o.monitors))
	}
	for _, m := range o.monitors {
		if len(m.Spec.Endpoints) != 1 || m.Spec.Endpoints[0].Path != "/metrics" || m.Spec.Endpoints[0].Port != "http" {
			t.Errorf("ServiceMonitor endpoints %+v: want /metrics on http", m.Spec.Endpoints)
		}
	}
	existing, _ := v["existingSecret"].(string)
	if (existing == "") != (len(o.secrets) == 1) {
		t.Errorf("existingSecret=%q, %d Secrets rendered", existing, len(o.secrets))
	}
	storeURL, _ := v.PathValue("store.url")
	sqlite := existing == "" && storeURL == nil || storeURL == ""
	if existing != "" {
		sqlite = v["existingSecretSQLite"] == true
	}
	hasStore := false
	for _, e := range c.Env {
		if e.Name == "IDFORGE_STORE" {
			hasStore = true
		}
	}
	if hasStore == sqlite {
		t.Errorf("SQLite %v, yet IDFORGE_STORE set %v", sqlite, hasStore)
	}
	if (len(pod.InitContainers) == 1) == sqlite {
		t.Errorf("SQLite %v, yet %d init containers (migrate is for a database server)", sqlite, len(pod.InitContainers))
	}
	for _, s := range o.secrets {
		if _, ok := s.StringData["store-url"]; ok == sqlite {
			t.Errorf("Secret store-url present %v with SQLite %v", ok, sqlite)
		}
	}
	tls, _ := v.Table("tls")
	want := corev1.URISchemeHTTP
	if tls["secretName"] != "" {
		want = corev1.URISchemeHTTPS
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		if p.HTTPGet.Scheme != want {
			t.Errorf("probe %s over %s, want %s", p.HTTPGet.Path, p.HTTPGet.Scheme, want)
		}
	}
	if fromStore, _ := v.PathValue("worker.fromStore"); fromStore == true {
		ok := false
		for _, e := range c.Env {
			if e.Name == "IDFORGE_WORKER" && e.ValueFrom.SecretKeyRef.Key == "store-url" {
				ok = true
			}
		}
		if !ok {
			t.Error("worker.fromStore: IDFORGE_WORKER is not the Secret's store-url")
		}
	}
}

func podOf(o objects) corev1.PodSpec {
	if len(o.sts) > 0 {
		return o.sts[0].Spec.Template.Spec
	}
	return o.deploy[0].Spec.Template.Spec
}

// TestChartRefuses checks that values which would issue duplicates, or
// could not start, fail to render with a message saying why.
func TestChartRefuses(t *testing.T) {
	ch := loadChart(t)
	token := map[string]any{"token": "t"}
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"SQLite on several replicas", map[string]any{"auth": token, "replicaCount": 3}, "SQLite (no store.url) serves one statefulset replica only"},
		{"SQLite in a Deployment", map[string]any{"auth": token, "replicaCount": 1, "mode": "deployment", "worker": map[string]any{"url": "etcd://e:2379/w"}}, "SQLite (no store.url) serves one"},
		{"SQLite on an emptyDir", map[string]any{"auth": token, "replicaCount": 1, "persistence": map[string]any{"enabled": false}}, "needs persistence.enabled"},
		{"Deployment without a coordinator", map[string]any{"auth": token, "mode": "deployment", "store": map[string]any{"url": "mysql://db/ids"}}, "deployment mode needs a worker-ID coordinator"},
		{"two coordinators", map[string]any{"auth": token, "mode": "deployment", "store": map[string]any{"url": "mysql://db/ids"}, "worker": map[string]any{"url": "etcd://e:2379/w", "fromStore": true}}, "not both"},
		{"no token", map[string]any{"store": map[string]any{"url": "mysql://db/ids"}}, "auth.token (or existingSecret) is required"},
		{"unknown mode", map[string]any{"auth": token, "mode": "daemonset"}, `mode "daemonset"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, ch, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
