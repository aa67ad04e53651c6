package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/idforge/idforge/auth"
	"github.com/idforge/idforge/quota"
)

// idforge quotas defines, lists, shows and retires a server's quotas
// with an admin token; the config file's quotas are listed as from the
// file; a bad quota exits 2 with the server's message; a refused call
// is the documented 403 rejected.
func TestQuotasCommand(t *testing.T) {
	cfg := defaultConfig()
	cfg.Data = t.TempDir()
	cfg.LogLevel = "error"
	const token = "admin-token-0123456789"
	cfg.Auth.Tokens = []auth.Token{{Name: "ops", Token: token, Role: auth.RoleAdmin}}
	cfg.Quotas = []quota.Spec{{Name: "legacy-closed", Keys: []string{"legacy"}, Closed: true}}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := openNode(ctx, cfg, newLogger(io.Discard, "error"), cfg.owner(""), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	authn, err := auth.New(auth.FromEnv(cfg.Auth))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpHandler(n, newLogger(io.Discard, "error"), authn))
	defer srv.Close()
	cli := func(args ...string) (int, string) {
		var out, errs bytes.Buffer
		code := run(ctx, append(args, "--node", srv.URL, "--token", token), &out, &errs, env(nil))
		return code, out.String() + errs.String()
	}
	if code, out := cli("quotas", "define", "orders", "--keys", "order*", "--limit", "0", "--per", "day"); code != 2 || !strings.Contains(out, "limit 0 per day") {
		t.Fatalf("limit 0: exit %d: %s", code, out)
	}
	if code, out := cli("quotas", "define", "orders", "--keys", "order*", "--limit", "10", "--per", "fortnight"); code != 2 || !strings.Contains(out, "unknown period") {
		t.Fatalf("bad period: exit %d: %s", code, out)
	}
	if code, out := cli("quotas", "define", "orders", "--keys", "order*", "--limit", "10", "--per", "minute"); code != 0 || !strings.Contains(out, `"limit": 10`) {
		t.Fatalf("define: exit %d: %s", code, out)
	}
	code, out := cli("quotas", "list")
	if code != 0 || !strings.Contains(out, "10 per minute") || !strings.Contains(out, "legacy-closed") || !strings.Contains(out, "file") {
		t.Fatalf("list: exit %d: %s", code, out)
	}
	if code, out := cli("quotas", "retire", "legacy-closed"); code != 2 || !strings.Contains(out, "configuration file") {
		t.Fatalf("retire a file quota: exit %d: %s", code, out)
	}
	if code, out := cli("quotas", "retire", "orders"); code != 0 || !strings.Contains(out, `"retired": true`) {
		t.Fatalf("retire: exit %d: %s", code, out)
	}
}
