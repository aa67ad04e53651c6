package worker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"net"
	"net/netip"
	"net/url"
	"sync"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

func init() {
	Register(Scheme{Name: "ip", Form: "ip://?bits=16&net=10.0.0.0/8",
		Doc: "the low bits of this host's first private IPv4 address, as sonyflake; ip+mysql://, ip+postgres://, ip+sqlite: also hold it in idforge_workers"},
		func(_ context.Context, u *url.URL, opts Options) (Provider, error) {
			q := dsn.NewQuery(u, "ip worker URL")
			if u.Host != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
				return nil, q.Errorf("want ip://?bits=N&net=CIDR&addr=IPv4, with nothing before the '?'")
			}
			src, err := ParseIP(q)
			if err == nil {
				err = q.Done()
			}
			if err != nil {
				return nil, err
			}
			return &ipProvider{src: src, log: opts.WithDefaults().Logger}, nil
		})
}

// IP derives a worker ID from an IPv4 address, as sonyflake derives its
// machine ID: the address's low Bits bits. The address is Addr, else
// the first private IPv4 address (10/8, 172.16/12, 192.168/16) of this
// host's interfaces, else, with Net, the first one inside Net. Two hosts
// whose addresses agree in those bits get the same ID: addresses in one
// subnet of 2^Bits addresses never do, addresses of different subnets may.
type IP struct {
	// Bits is how many low bits of the address make the ID; 0 means all
	// the layout's worker bits.
	Bits int
	// Net, when set, is where the address must be.
	Net netip.Prefix
	// Addr, when set, is the address, instead of the interfaces'.
	Addr netip.Addr
}

// ParseIP reads an IP from a worker URL's parameters bits, net and addr,
// leaving q's other parameters.
func ParseIP(q *dsn.Query) (IP, error) {
	ip := IP{Bits: int(q.Int("bits", 0, 1, 31))}
	q.Func("net", func(v string) (err error) {
		if ip.Net, err = netip.ParsePrefix(v); err != nil || !ip.Net.Addr().Is4() {
			return errors.New("an IPv4 CIDR such as 10.0.0.0/8")
		}
		return nil
	})
	q.Func("addr", func(v string) (err error) {
		if ip.Addr, err = netip.ParseAddr(v); err != nil || !ip.Addr.Is4() {
			return errors.New("an IPv4 address")
		}
		return nil
	})
	return ip, q.Err()
}

// ID returns the worker ID in 0..max, the address it comes from and the
// bits it took. It fails wrapping idforge.ErrInvalidWorker when Bits do
// not fit max or no address qualifies.
func (ip IP) ID(max int64) (id int64, addr netip.Addr, n int, err error) {
	n = bits.Len64(uint64(max))
	if ip.Bits > n {
		return 0, addr, 0, fmt.Errorf("%w: bits=%d does not fit the layout's %d worker bits (IDs 0..%d)", idforge.ErrInvalidWorker, ip.Bits, n, max)
	}
	n = min(n, 32)
	if ip.Bits > 0 {
		n = ip.Bits
	}
	if addr = ip.Addr; !addr.IsValid() {
		ifaces, err := net.InterfaceAddrs()
		if err != nil {
			return 0, addr, 0, fmt.Errorf("%w: listing this host's addresses: %v", idforge.ErrInvalidWorker, err)
		}
		if addr, err = pickIPv4(ifaces, ip.Net); err != nil {
			return 0, addr, 0, err
		}
	}
	b := addr.As4()
	id = int64(binary.BigEndian.Uint32(b[:]) & (1<<n - 1))
	if id > max {
		return 0, addr, 0, fmt.Errorf("%w: the low %d bits of %s are %d, above the layout's largest worker ID %d", idforge.ErrInvalidWorker, n, addr, id, max)
	}
	return id, addr, n, nil
}

// pickIPv4 returns the first IPv4 address of addrs inside within, or,
// without within, the first private one.
func pickIPv4(addrs []net.Addr, within netip.Prefix) (netip.Addr, error) {
	var seen []string
	for _, a := range addrs {
		pfx, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		ip := pfx.Addr().Unmap()
		seen = append(seen, ip.String())
		if ip.Is4() && (within.IsValid() && within.Contains(ip) || !within.IsValid() && ip.IsPrivate()) {
			return ip, nil
		}
	}
	want := "private IPv4 address (10/8, 172.16/12, 192.168/16)"
	if within.IsValid() {
		want = "IPv4 address in " + within.String()
	}
	return netip.Addr{}, fmt.Errorf("%w: this host has no %s among %v; set net=CIDR or addr=IPv4 in the ip worker URL",
		idforge.ErrInvalidWorker, want, seen)
}

// Describe says which address and bits an ID came from.
func (ip IP) Describe(id int64, addr netip.Addr, n int) string {
	return fmt.Sprintf("worker ID %d: the low %d bits of IPv4 address %s", id, n, addr)
}

// ipProvider is ip://: the ID of the address, checked by nobody.
type ipProvider struct {
	src  IP
	log  *slog.Logger
	mu   sync.Mutex
	desc string
}

func (p *ipProvider) Acquire(ctx context.Context, max int64) (Lease, error) {
	id, addr, n, err := p.src.ID(max)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.desc = p.src.Describe(id, addr, n) + " (unchecked: another host whose address shares them gets the same ID)"
	p.mu.Unlock()
	p.log.Info("worker ID from the IP address", "worker", id, "address", addr, "bits", n)
	return fixedLease(id), nil
}

func (p *ipProvider) Describe() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.desc == "" {
		return "the low bits of this host's IPv4 address"
	}
	return p.desc
}
