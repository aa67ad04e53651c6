package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGeneratedFilesAreCurrent fails when the Java or Python code table
// differs from codes.go: run "go generate ./clients/..." and commit.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for name, want := range generated() {
		got, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("clients/%s is stale: its error codes differ from codes.go; run go generate ./clients/... and commit it", name)
		}
	}
}

// versionSites are the files that carry idforge's version, each with the
// pattern whose first group is the version, relative to the repository's
// root.
var versionSites = []struct {
	file    string
	pattern string
	min     int // matches expected (at least)
}{
	{"clients/java/pom.xml", `<artifactId>idforge-client</artifactId>\s*<version>([^<]+)</version>`, 1},
	{"clients/java/src/main/java/io/github/idforge/client/IdForge.java", `String VERSION = "([^"]+)"`, 1},
	{"clients/python/pyproject.toml", `(?m)^version = "([^"]+)"`, 1},
	{"clients/python/idforge_client/__init__.py", `(?m)^__version__ = "([^"]+)"`, 1},
	{"deploy/helm/idforge/Chart.yaml", `(?m)^version: (\S+)$`, 1},
	{"deploy/helm/idforge/Chart.yaml", `(?m)^appVersion: "([^"]+)"$`, 1},
	{"deploy/kubernetes/overlays/deployment/deployment.yaml", `image: idforge/idforge:(\S+)`, 1},
	{"deploy/kubernetes/overlays/statefulset/statefulset.yaml", `image: idforge/idforge:(\S+)`, 1},
	// The newest release in the changelog (Keep a Changelog: "## [0.1.0] - 2026-11-28").
	{"CHANGELOG.md", `(?m)^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$`, 1},
}

// TestVersionEverywhere checks that every file carrying idforge's version
// (the clients' packages, the Helm chart, the Kubernetes manifests' image,
// the changelog's newest release) carries the one in VERSION, the single
// source of truth that scripts/release.sh stamps into the binary.
func TestVersionEverywhere(t *testing.T) {
	raw, err := os.ReadFile("../../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) || string(raw) != version+"\n" {
		t.Fatalf("VERSION holds %q: want one semantic version (1.2.3) and a newline", raw)
	}
	for _, s := range versionSites {
		text, err := os.ReadFile(filepath.Join("../../..", s.file))
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(s.pattern)
		ms := re.FindAllStringSubmatch(string(text), -1)
		if len(ms) < s.min {
			t.Errorf("%s: no match for %s", s.file, s.pattern)
			continue
		}
		if s.file == "CHANGELOG.md" {
			ms = ms[:1] // the newest release only
		}
		for _, m := range ms {
			if m[1] != version {
				t.Errorf("%s carries version %s, VERSION says %s", s.file, m[1], version)
			}
		}
	}
}
