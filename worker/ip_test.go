package worker

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

func cidrs(t *testing.T, list ...string) []net.Addr {
	var out []net.Addr
	for _, s := range list {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		out = append(out, n)
	}
	return out
}

// Issue 27, item 2: the address an ip:// worker ID comes from.
func TestPickIPv4(t *testing.T) {
	ifaces := []string{"127.0.0.1/8", "::1/128", "fe80::1/64", "fd00::5/64", "8.8.8.8/24", "172.15.0.1/16", "172.32.0.1/16"}
	for _, tt := range []struct {
		name, net string
		addrs     []string
		want      string // "" when none qualifies
	}{
		{"10/8", "", append(ifaces, "10.1.2.3/8", "192.168.0.9/24"), "10.1.2.3"},
		{"172.16/12 low end", "", append(ifaces, "172.16.0.1/16"), "172.16.0.1"},
		{"172.16/12 high end", "", append(ifaces, "172.31.255.7/16"), "172.31.255.7"},
		{"192.168/16", "", append(ifaces, "192.168.4.5/24"), "192.168.4.5"},
		{"first private wins", "", []string{"192.168.4.5/24", "10.1.2.3/8"}, "192.168.4.5"},
		{"no private", "", ifaces, ""},
		{"none at all", "", nil, ""},
		{"net filter", "10.0.0.0/8", []string{"192.168.4.5/24", "10.1.2.3/8"}, "10.1.2.3"},
		{"net may be public", "8.8.8.0/24", append(ifaces, "10.1.2.3/8"), "8.8.8.8"},
		{"net no match", "10.9.0.0/16", []string{"192.168.4.5/24", "10.1.2.3/8"}, ""},
	} {
		var within netip.Prefix
		if tt.net != "" {
			within = netip.MustParsePrefix(tt.net)
		}
		got, err := pickIPv4(cidrs(t, tt.addrs...), within)
		if tt.want == "" {
			if !errors.Is(err, idforge.ErrInvalidWorker) || !strings.Contains(err.Error(), "set net=CIDR or addr=IPv4") {
				t.Errorf("%s: %v, %v; want ErrInvalidWorker saying what to set", tt.name, got, err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("%s: %v, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

// The ip:// URL and --worker ip, and the IDs they give.
func TestOpenIP(t *testing.T) {
	opts := Options{Logger: slog.New(slog.DiscardHandler)}
	for _, tt := range []struct {
		spec string
		max  int64
		want int64
		err  error
	}{
		{"ip://?addr=10.1.2.3", 1023, 0x203 & 1023, nil},                   // all 10 worker bits
		{"ip://?addr=10.1.2.3&bits=8", 1023, 3, nil},                       // sonyflake's rule, fewer bits
		{"ip://?addr=10.1.2.3&bits=16", 65535, 0x0203, nil},                // sonyflake's 16 bits
		{"ip://?addr=10.1.2.3&bits=16", 1023, 0, idforge.ErrInvalidWorker}, // does not fit the layout
		{"ip://?net=127.0.0.0/8", 1023, 1, nil},                            // this host's interfaces: loopback
	} {
		p, err := Open(context.Background(), tt.spec, opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		l, err := p.Acquire(context.Background(), tt.max)
		if !errors.Is(err, tt.err) || err == nil && l.ID() != tt.want {
			t.Errorf("%s, max %d: %v, %v; want %d, %v", tt.spec, tt.max, l, err, tt.want, tt.err)
		}
		if err == nil && !strings.Contains(p.Describe(), " bits of IPv4 address ") {
			t.Errorf("%s: Describe = %q, want the address and bits", tt.spec, p.Describe())
		}
	}
	// The shorthand opens the same provider.
	if p, err := Open(context.Background(), "ip", opts); err != nil || p.(*ipProvider) == nil {
		t.Fatalf("--worker ip: %v, %v", p, err)
	}
	for _, bad := range []string{"ip://?bits=0", "ip://?bits=40", "ip://?net=fe80::/10", "ip://?net=10.0.0.0", "ip://?addr=::1",
		"ip://?addr=10.0.0.300", "ip://10.0.0.1", "ip://?bogus=1"} {
		if _, err := Open(context.Background(), bad, opts); !errors.Is(err, idforge.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", bad, err)
		}
	}
}
