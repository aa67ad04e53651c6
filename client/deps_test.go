package client

import (
	"os/exec"
	"strings"
	"testing"
)

// A program that uses only the remote clients links neither the issuer
// nor what it builds on: NewEmbedded names the issuer by the Issuer
// interface, not by its package.
func TestRemoteClientLinksNoIssuer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/idforge/idforge/"
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"issuer", "segment", "serial", "store", "sequence", "worker", "server"} {
			if pkg == module+banned || strings.HasPrefix(pkg, module+banned+"/") {
				t.Errorf("the client links %s", pkg)
			}
		}
	}
}
