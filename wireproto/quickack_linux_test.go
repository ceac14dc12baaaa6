package wireproto

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"

	"github.com/hgfs/hgfs/testenv"
	"golang.org/x/sys/unix"
)

// TestHTTPQuickAck runs a peer's requests down one kept-alive
// connection to a real hg serve (each Mercurial's) and asks the
// kernel, as each request has been written, whether the connection
// acknowledges at once (getsockopt(TCP_QUICKACK) reads 1 outside the
// delayed-ACK "pingpong" mode that sending a request right after a
// response enters). With
// QuickAck every request must leave it so; without, the same requests
// leave the connection delaying its acknowledgements, which is what
// held each of hg serve's responses 40 ms: the test would pass for
// nothing if the kernel never entered that mode.
func TestHTTPQuickAck(t *testing.T) {
	repo := fixture(t)
	for _, hg := range testenv.Mercurials(t) {
		t.Run(hg.Name, func(t *testing.T) { checkQuickAck(t, hg.Serve(t, repo)) })
	}
}

func checkQuickAck(t *testing.T, url string) {
	for _, quick := range []bool{true, false} {
		p, err := DialHTTP(context.Background(), url, Options{QuickAck: quick})
		if err != nil {
			t.Fatal(err)
		}
		// Watch the peer's own dialer's connections from outside: the
		// state is read after each write has gone through them.
		tr := p.client.Transport.(*http.Transport)
		tr.CloseIdleConnections()
		dial := tr.DialContext
		var (
			mu     sync.Mutex
			states []int
			conns  int
		)
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			var raw syscall.RawConn
			switch c := c.(type) {
			case *quickAckConn:
				raw = c.raw
			case *net.TCPConn:
				if raw, err = c.SyscallConn(); err != nil {
					return nil, err
				}
			default:
				t.Errorf("quickack %v: the peer dials a %T", quick, c)
				return c, nil
			}
			if _, wrapped := c.(*quickAckConn); wrapped != quick {
				t.Errorf("quickack %v: the peer dials a %T", quick, c)
			}
			mu.Lock()
			conns++
			mu.Unlock()
			return &ackProbe{Conn: c, raw: raw, mu: &mu, states: &states}, nil
		}
		for range 4 {
			if _, err := p.Heads(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := p.ListKeys(context.Background(), "bookmarks"); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
		mu.Lock()
		if conns != 1 {
			t.Fatalf("quickack %v: %d connections for 8 requests; the test needs one kept alive", quick, conns)
		}
		delaying := 0
		for _, v := range states {
			if v == 0 {
				delaying++
			}
		}
		mu.Unlock()
		switch {
		case quick && delaying > 0:
			t.Errorf("quickack on: %d of %d requests left the connection delaying its acknowledgements (%v)", delaying, len(states), states)
		case !quick && delaying == 0:
			t.Errorf("quickack off: no request of %d left the connection delaying its acknowledgements (%v): the kernel does not behave as the trick assumes", len(states), states)
		}
	}
}

// ackProbe records TCP_QUICKACK after each write.
type ackProbe struct {
	net.Conn
	raw    syscall.RawConn
	mu     *sync.Mutex
	states *[]int
}

func (c *ackProbe) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	v := -1
	_ = c.raw.Control(func(fd uintptr) {
		v, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK)
	})
	c.mu.Lock()
	*c.states = append(*c.states, v)
	c.mu.Unlock()
	return n, err
}
