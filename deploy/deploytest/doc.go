// Package deploytest renders idforge's Helm chart and Kustomize overlays
// with Helm's and Kustomize's own Go packages, decodes every object
// strictly into the Kubernetes API types and asserts the properties a safe
// deployment depends on. It is a module of its own, so that idforge's
// go.mod gains no Helm or Kubernetes dependencies.
package deploytest
