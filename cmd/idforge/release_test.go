package main_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// releaseBuild matches the release go build line of the Dockerfile and
// captures its build tags.
var releaseBuild = regexp.MustCompile(`CGO_ENABLED=0 go build -tags (\S+) -trimpath -ldflags "-s -w`)

// TestReleaseBuild checks the release build (the Dockerfile's,
// scripts/release.sh's, and the command docs/operating.md and its
// translation give under "Packaging"): all use the same tags, and with
// them the binary links none of the packages
// that undo the linker's dead-code elimination of methods. text/template
// (html/template, and golang.org/x/net/trace, which grpc-go imports
// unless built with grpcnotrace, on top of it) calls methods by name
// through reflect, so with it in the binary every exported method of
// every type stays: about 10 MB more (BENCHMARKS.md, "Binary size").
func TestReleaseBuild(t *testing.T) {
	docker, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := releaseBuild.FindSubmatch(docker)
	if m == nil {
		t.Fatalf("the Dockerfile has no line matching %s", releaseBuild)
	}
	tags := string(m[1])
	for _, readme := range []string{"../../docs/operating.md", "../../docs/zh-CN/operating.md", "../../scripts/release.sh"} {
		text, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		if got := releaseBuild.FindSubmatch(text); got == nil || string(got[1]) != tags {
			t.Errorf("%s: its release command does not build with -tags %s as the Dockerfile does", readme, tags)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/idforge/idforge/cmd/idforge").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, pkg := range []string{"golang.org/x/net/trace", "html/template", "text/template", "github.com/chromedp/chromedp"} {
		if slices.Contains(deps, pkg) {
			t.Errorf("the release build (-tags %s) links %s", tags, pkg)
		}
	}
}
