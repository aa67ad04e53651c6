package deploytest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// workerSource is how a rendering is expected to give pods worker IDs.
type workerSource int

const (
	ordinal workerSource = iota // StatefulSet, --worker=k8s://
	leased                      // Deployment, --worker=URL or IDFORGE_WORKER
)

// objects is one rendering, by kind.
type objects struct {
	sts      []*appsv1.StatefulSet
	deploy   []*appsv1.Deployment
	services []*corev1.Service
	secrets  []*corev1.Secret
	configs  []*corev1.ConfigMap
	pdbs     []*policyv1.PodDisruptionBudget
	accounts []*corev1.ServiceAccount
	monitors []*ServiceMonitor
}

func sortObjects(t *testing.T, all []any) objects {
	t.Helper()
	var o objects
	for _, obj := range all {
		switch v := obj.(type) {
		case *appsv1.StatefulSet:
			o.sts = append(o.sts, v)
		case *appsv1.Deployment:
			o.deploy = append(o.deploy, v)
		case *corev1.Service:
			o.services = append(o.services, v)
		case *corev1.Secret:
			o.secrets = append(o.secrets, v)
		case *corev1.ConfigMap:
			o.configs = append(o.configs, v)
		case *policyv1.PodDisruptionBudget:
			o.pdbs = append(o.pdbs, v)
		case *corev1.ServiceAccount:
			o.accounts = append(o.accounts, v)
		case *ServiceMonitor:
			o.monitors = append(o.monitors, v)
		default:
			t.Errorf("unexpected object %T", obj)
		}
	}
	return o
}

// checkDeployment asserts what every way of running idforge on
// Kubernetes must have: one workload of the mode's kind whose pods are
// non-root with a read-only root file system, probe /readyz and /healthz,
// take their worker ID from the mode's source and their secrets from a
// Secret, and have time to hand segments back; a PodDisruptionBudget and
// a Service with http and grpc selecting those pods.
func checkDeployment(t *testing.T, o objects, mode workerSource, grpc bool) {
	t.Helper()
	var pod corev1.PodTemplateSpec
	var selector map[string]string
	switch mode {
	case ordinal:
		if len(o.sts) != 1 || len(o.deploy) != 0 {
			t.Fatalf("want one StatefulSet, got %d StatefulSets and %d Deployments", len(o.sts), len(o.deploy))
		}
		pod, selector = o.sts[0].Spec.Template, o.sts[0].Spec.Selector.MatchLabels
		headless := false
		for _, s := range o.services {
			if s.Name == o.sts[0].Spec.ServiceName && s.Spec.ClusterIP == corev1.ClusterIPNone {
				headless = true
			}
		}
		if !headless {
			t.Errorf("no headless Service %q governs the StatefulSet", o.sts[0].Spec.ServiceName)
		}
	case leased:
		if len(o.deploy) != 1 || len(o.sts) != 0 {
			t.Fatalf("want one Deployment, got %d Deployments and %d StatefulSets", len(o.deploy), len(o.sts))
		}
		pod, selector = o.deploy[0].Spec.Template, o.deploy[0].Spec.Selector.MatchLabels
	}
	if len(selector) == 0 {
		t.Fatal("the workload has no selector")
	}
	for k, v := range selector {
		if pod.Labels[k] != v {
			t.Errorf("pod label %s=%q does not match the selector's %q", k, pod.Labels[k], v)
		}
	}
	spec := pod.Spec
	if sc := spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("pod securityContext.runAsNonRoot is not true")
	}
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g < 25 {
		t.Errorf("terminationGracePeriodSeconds %v: want at least 25 s (drain 10 s, hand-back, lease release)", g)
	}
	containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("container %s: runAsNonRoot is not true", c.Name)
		}
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("container %s: no CPU or memory request", c.Name)
		}
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/data" }) {
			t.Errorf("container %s: no volume at /data, the data directory", c.Name)
		}
	}
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "idforge" })
	if i < 0 {
		t.Fatal("no container idforge")
	}
	c := spec.Containers[i]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Errorf("args %q do not start with serve", c.Args)
	}
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: none over HTTP", name)
			return
		}
		if p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe: %s on port %s, want %s on http", name, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		t.Error("no preStop hook to let the Services forget the pod before SIGTERM")
	}

	flags := map[string]string{}
	for _, a := range c.Args[1:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		flags[name] = value
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if flags["http"] == "" || flags["data"] != "/data" {
		t.Errorf("flags %v: want --http and --data=/data", flags)
	}
	if grpc && flags["grpc"] == "" {
		t.Errorf("flags %v: no --grpc", flags)
	}
	switch mode {
	case ordinal:
		if !strings.HasPrefix(flags["worker"], "k8s://") {
			t.Errorf("--worker=%q: want k8s:// (the StatefulSet ordinal)", flags["worker"])
		}
		if f := env["POD_NAME"].ValueFrom; f == nil || f.FieldRef == nil || f.FieldRef.FieldPath != "metadata.name" {
			t.Error("POD_NAME does not come from metadata.name")
		}
	case leased:
		w, fromEnv := flags["worker"], env["IDFORGE_WORKER"].ValueFrom
		switch {
		case w != "" && fromEnv != nil:
			t.Errorf("both --worker=%s and IDFORGE_WORKER: the flag wins, silently", w)
		case strings.HasPrefix(w, "etcd://"):
		case fromEnv != nil && fromEnv.SecretKeyRef != nil:
		default:
			t.Errorf("--worker=%q and IDFORGE_WORKER %+v: want a coordinator (etcd:// or the SQL store from the Secret)", w, fromEnv)
		}
		for _, v := range spec.Volumes {
			if v.Name == "data" && v.EmptyDir == nil {
				t.Errorf("deployment mode keeps /data on %+v: pods of a Deployment must not share one", v.VolumeSource)
			}
		}
	}
	for _, name := range []string{"IDFORGE_TOKEN", "IDFORGE_STORE"} {
		e, ok := env[name]
		if !ok {
			continue
		}
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s is not read from a Secret", name)
		}
	}
	if _, ok := env["IDFORGE_TOKEN"]; !ok {
		t.Error("no IDFORGE_TOKEN: idforge refuses to listen on 0.0.0.0 without one")
	}

	if len(o.pdbs) != 1 {
		t.Errorf("%d PodDisruptionBudgets, want 1", len(o.pdbs))
	} else if sel := o.pdbs[0].Spec.Selector; sel == nil || !selects(sel.MatchLabels, pod.Labels) {
		t.Errorf("the PodDisruptionBudget's selector %v misses the pods %v", sel, pod.Labels)
	}
	var ports []string
	for _, s := range o.services {
		if s.Spec.ClusterIP == corev1.ClusterIPNone {
			continue
		}
		if !selects(s.Spec.Selector, pod.Labels) {
			t.Errorf("Service %s selector %v misses the pods %v", s.Name, s.Spec.Selector, pod.Labels)
		}
		for _, p := range s.Spec.Ports {
			ports = append(ports, p.Name)
			if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.String() }) {
				t.Errorf("Service %s port %s targets %s, which the container does not name", s.Name, p.Name, p.TargetPort.String())
			}
		}
	}
	want := []string{"http"}
	if grpc {
		want = append(want, "grpc")
	}
	if fmt.Sprint(ports) != fmt.Sprint(want) {
		t.Errorf("Service ports %v, want %v", ports, want)
	}
}

// selects reports whether a selector's labels are all among labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
