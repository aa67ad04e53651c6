package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An obfuscate plugin set up in the config file over keys it cannot
// permute stops the node from starting (exit 2), naming the key and the
// plugin: a key that already exists (declared before the plugin was
// added) and a snowflake key, whose IDs use all 63 bits.
func TestPluginWidthCheckedOverExistingKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	keys := `
[[keys]]
name = "big"
start = 5000
step = 10
[[keys]]
name = "evt"
strategy = "snowflake"
`
	e := env(map[string]string{"IDFORGE_DATA": filepath.Join(dir, "data"), "IDFORGE_CONFIG": file, "SECRET_KEY": "a key of sixteen+ bytes"})
	os.WriteFile(file, []byte(keys), 0o600)
	if code, out, stderr := runCmd(t, e, "next", "big"); code != 0 || strings.TrimSpace(out) != "5000" {
		t.Fatalf("before the plugin: %d %q %q", code, out, stderr)
	}
	for _, tc := range []struct{ plugin, says string }{
		{"bits = 8\nkeys = [\"big\"]", `key "big": start 5000 out of range [1, 246] for step 10: the first segment holds IDs start to start+9, and 255 is the largest ID the key can issue: plugin obfuscate (8 bits) takes no ID above that`},
		{"bits = 32\nkeys = [\"evt\"]", `key "evt": snowflake IDs grow through all 63 bits, but plugin obfuscate (32 bits) permutes only 32; give it bits = 63`},
	} {
		os.WriteFile(file, []byte(keys+"[[plugins]]\nkind = \"obfuscate\"\nkey = \"env:SECRET_KEY\"\n"+tc.plugin+"\n"), 0o600)
		code, out, stderr := runCmd(t, e, "next", "big")
		if code != 2 || !strings.Contains(stderr, tc.says) {
			t.Errorf("plugin %q: exit %d %q %q, want 2 saying %s", tc.plugin, code, out, stderr, tc.says)
		}
	}
}
