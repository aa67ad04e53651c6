package e2e

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy between idforge and a database, for failure tests:
// it can cut every connection (the database "goes away") and add latency
// to every round trip.
type Proxy struct {
	ln      net.Listener
	target  string       // guarded by mu
	latency atomic.Int64 // added to each client→server chunk, in ns

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	// held, while not nil, holds every chunk back until it is closed.
	held chan struct{}
}

// StartProxy listens on a free loopback port and forwards to target. It
// stops when the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every open connection and refuses new ones until Restore:
// to idforge the database is gone. Chunks held back (Hold) are dropped.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.release()
}

// Hold keeps the connections open but holds back every chunk, in both
// directions, until Release (which sends them on) or Cut (which drops
// them): a link that lags, such as replication to a replica.
func (p *Proxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
}

// Release sends on the chunks held back since Hold, and lets later ones
// through.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.release()
}

func (p *Proxy) release() {
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
}

// pass waits while chunks are held back.
func (p *Proxy) pass() {
	p.mu.Lock()
	h := p.held
	p.mu.Unlock()
	if h != nil {
		<-h
	}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// SetTarget sends new connections to target from now on, as a virtual IP
// or DNS name moved to a promoted replica would; open connections stay
// where they are (Cut closes them).
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

// SetLatency delays every chunk sent towards the database by d, so each
// round trip takes d longer.
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) handle(client net.Conn) {
	if !p.track(client) {
		client.Close()
		return
	}
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	server, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil || !p.track(server) {
		client.Close()
		if server != nil {
			server.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	go func() { // client → server, delayed
		p.copy(server, client, true)
		done <- struct{}{}
	}()
	go func() { // server → client
		p.copy(client, server, false)
		done <- struct{}{}
	}()
	<-done
	client.Close()
	server.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// copy forwards chunks from src to dst, each after the latency when
// delayed, and held back while the proxy holds.
func (p *Proxy) copy(dst, src net.Conn, delayed bool) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.latency.Load()); delayed && d > 0 {
				time.Sleep(d)
			}
			p.pass()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
