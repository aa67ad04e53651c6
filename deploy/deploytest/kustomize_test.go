package deploytest

import (
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// build runs Kustomize on dir as "kubectl kustomize dir" would.
func build(t *testing.T, dir string) string {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestKustomize builds the base and both overlays, decodes every object
// strictly, and checks each overlay's properties.
func TestKustomize(t *testing.T) {
	t.Run("base", func(t *testing.T) {
		all, err := decodeAll(build(t, "../kubernetes/base"))
		if err != nil {
			t.Fatal(err)
		}
		o := sortObjects(t, all)
		if len(o.services) != 1 || len(o.pdbs) != 1 || len(o.accounts) != 1 || len(o.sts)+len(o.deploy) != 0 {
			t.Errorf("base: %d Services, %d PDBs, %d ServiceAccounts, %d workloads; want 1, 1, 1, 0",
				len(o.services), len(o.pdbs), len(o.accounts), len(o.sts)+len(o.deploy))
		}
	})
	for _, tc := range []struct {
		overlay string
		mode    workerSource
	}{
		{"statefulset", ordinal},
		{"deployment", leased},
	} {
		t.Run(tc.overlay, func(t *testing.T) {
			out := build(t, "../kubernetes/overlays/"+tc.overlay)
			all, err := decodeAll(out)
			if err != nil {
				t.Fatal(err)
			}
			checkDeployment(t, sortObjects(t, all), tc.mode, true)
			if t.Failed() {
				t.Log(out)
			}
		})
	}
}
