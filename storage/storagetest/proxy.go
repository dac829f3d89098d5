package storagetest

import (
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
)

// Proxy forwards TCP connections to a database server. Frozen, it holds every byte and
// every new connection without closing anything, as a server whose processes are stopped
// does: the connections stay open and nothing answers. Tests of a hung database use it.
type Proxy struct {
	ln net.Listener

	mu     sync.Mutex
	thawed chan struct{} // closed while the proxy forwards
	conns  []net.Conn
}

// OpenProxied is a fresh Postgres database, migrated, opened with opts and reached through a
// Proxy of its own, which the test can freeze, drop or cut. It is closed when the test ends.
func OpenProxied(t testing.TB, opts storage.Options) (*storage.DB, *Proxy) {
	t.Helper()
	target, err := url.Parse(NewURL(t, storage.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	p := StartProxy(t, target.Host)
	target.Host = p.Addr()
	ctx := context.Background()
	db, err := storage.OpenWith(ctx, target.String(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatalf("migrating %s: %v", db.URL(), err)
	}
	return db, p
}

// StartProxy forwards connections to target (host:port) until the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, thawed: make(chan struct{})}
	close(p.thawed)
	t.Cleanup(p.close)
	go p.accept(target)
	return p
}

// Addr is the host:port to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Freeze stops forwarding: what is sent waits, and new connections are accepted and hang.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
	default: // already frozen
	}
}

// Thaw forwards again, what waited first.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
}

// gate is closed while the proxy forwards.
func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.thawed
}

func (p *Proxy) accept(target string) {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(in)
		go func() {
			<-p.gate()
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				return
			}
			p.track(out)
			go p.pipe(out, in)
			p.pipe(in, out)
		}()
	}
}

func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = append(p.conns, c)
}

// pipe copies from src to dst, each chunk only while the proxy is thawed.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				src.Close()
			}
			return
		}
	}
}

// Drop ends every connection open now and keeps accepting new ones, as a server restart or a
// network that fails for a moment does.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Cut ends every connection and accepts no more, as a network that fails does.
func (p *Proxy) Cut() { p.close() }

// close thaws (so nothing waits forever) and closes every connection.
func (p *Proxy) close() {
	p.Thaw()
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
