// Package deploytest tests idforge's Kubernetes deployment files with the
// tools themselves: it renders the Helm chart (deploy/helm/idforge) with
// Helm's own Go packages for every documented values file, lints it, and
// builds the Kustomize base and overlays (deploy/kubernetes) with
// Kustomize's; every rendered object is decoded strictly into the
// Kubernetes API types (an unknown or duplicate field fails), and the
// properties a safe deployment depends on are asserted.
//
// It is a module of its own so that idforge's go.mod gains no Helm or
// Kubernetes dependencies; the main module's TestDeployModule
// (deploy/deploy_module_test.go) runs it.
package deploytest
