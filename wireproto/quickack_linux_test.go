package wireproto

import (
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
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
		n := conns
		delaying := 0
		for _, v := range states {
			if v == 0 {
				delaying++
			}
		}
		mu.Unlock()
		if n != 1 {
			t.Fatalf("quickack %v: %d connections for 8 requests; the test needs one kept alive", quick, n)
		}
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

// TestQuickAckConn: the dialer's connections are the wrapper, and both
// ways a request goes out, Write and ReadFrom (a request body a
// bufio.Writer with nothing buffered hands over whole), leave the
// connection acknowledging at once after a reply came in; the same
// exchange on a plain connection leaves it delaying, or the check
// would pass for nothing.
func TestQuickAckConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					if _, err := c.Write([]byte("ok\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	state := func(c net.Conn) int {
		var raw syscall.RawConn
		switch c := c.(type) {
		case *quickAckConn:
			raw = c.raw
		case *net.TCPConn:
			var err error
			if raw, err = c.SyscallConn(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("a %T", c)
		}
		v := -1
		var gerr error
		if err := raw.Control(func(fd uintptr) {
			v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK)
		}); err != nil || gerr != nil {
			t.Fatal(err, gerr)
		}
		return v
	}
	// exchange sends requests each way after a first reply and returns
	// the states read right after each was sent.
	exchange := func(c net.Conn) []int {
		reply := make([]byte, 3)
		var states []int
		for i := range 6 {
			if i%2 == 0 {
				if _, err := c.Write([]byte("req")); err != nil {
					t.Fatal(err)
				}
			} else if _, err := c.(io.ReaderFrom).ReadFrom(strings.NewReader("body")); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				states = append(states, state(c))
			}
			if _, err := io.ReadFull(c, reply); err != nil {
				t.Fatal(err)
			}
		}
		return states
	}
	dial := (&net.Dialer{}).DialContext
	c, err := quickAckDialer(dial)(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*quickAckConn); !ok {
		t.Fatalf("the dialer returns a %T", c)
	}
	for i, v := range exchange(c) {
		if v != 1 {
			t.Errorf("request %d (by %s): TCP_QUICKACK reads %d after it", i+1, []string{"ReadFrom", "Write"}[i%2], v)
		}
	}
	plain, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if !slices.Contains(exchange(plain), 0) {
		t.Error("a plain connection never delayed its acknowledgements: the kernel does not behave as the trick assumes")
	}
}
