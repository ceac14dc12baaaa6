package wireproto

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hgfs/hgfs/changegroup"
	"github.com/hgfs/hgfs/testenv"
)

// smallBuffers makes each accepted connection's send buffer small, so a
// client that stops reading stalls the server's writes almost at once
// instead of after megabytes of loopback buffering.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// slowClone starts a changegroup clone of the corpus repository served
// with cfg (over small socket buffers), reads the first 64 KiB, stops
// reading for pause, then reads the rest through the bundle and
// changegroup readers. It returns the changesets read and the first
// error.
func slowClone(t *testing.T, cfg ServerConfig, pause time.Duration) (int, error) {
	src := testenv.CorpusRepo(t, testenv.CorpusHistory)
	srv, err := NewServer(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := serveListener(t, srv, smallBuffers{ln})
	dial := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetReadBuffer(16 << 10)
			}
			return c, err
		}}}
	ctx := context.Background()
	p, err := DialHTTP(ctx, url, Options{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b2, err := p.Capabilities().Bundle2()
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.GetBundle(ctx, PullArgs(b2, nil, mustHeads(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	first := make([]byte, 64<<10)
	if _, err := io.ReadFull(body, first); err != nil {
		t.Fatalf("first 64 KiB: %v", err)
	}
	time.Sleep(pause)
	b, err := changegroup.OpenBundle(io.MultiReader(bytes.NewReader(first), body))
	if err != nil {
		return 0, err
	}
	defer b.Close()
	changesets := 0
	for {
		part, err := b.NextPart()
		if err == io.EOF {
			return changesets, nil
		}
		if err != nil {
			return changesets, err
		}
		if part.Changegroup == nil {
			continue
		}
		for {
			kind, _, err := part.Changegroup.NextGroup()
			if err == io.EOF {
				break
			}
			if err != nil {
				return changesets, err
			}
			var d changegroup.Delta
			for {
				ok, err := part.Changegroup.NextDelta(&d)
				if err != nil {
					return changesets, err
				}
				if !ok {
					break
				}
				if kind == changegroup.Changelog {
					changesets++
				}
			}
		}
	}
}

// TestSlowReaderClones: a client that stops reading a changegroup for a
// while (paused, or starved of CPU on a loaded machine) still gets all
// of it from a server of the default configuration, which, like hg
// serve, drops no client for being slow.
func TestSlowReaderClones(t *testing.T) {
	cfg := testConfig()
	if cfg.WriteTimeout != 0 {
		t.Fatalf("default write timeout %v: hg serve has none", cfg.WriteTimeout)
	}
	n, err := slowClone(t, cfg, 3*time.Second)
	if err != nil {
		t.Fatalf("after %d changesets: %v", n, err)
	}
	if n != 2971 {
		t.Errorf("%d changesets, want 2971", n)
	}
}

// TestStalledReaderDropped: with a write timeout, a client that accepts
// nothing for longer is dropped; the server logs why, and the client
// reports an incomplete response, not a malformed changegroup.
func TestStalledReaderDropped(t *testing.T) {
	cfg := testConfig()
	cfg.WriteTimeout = 500 * time.Millisecond
	var log syncBuffer
	cfg.ErrorLog = &log
	n, err := slowClone(t, cfg, 3*time.Second)
	if err == nil {
		t.Fatalf("clone complete (%d changesets) despite a stall longer than the write timeout", n)
	}
	if !errors.Is(err, ErrConnection) || errors.Is(err, changegroup.ErrCorrupt) {
		t.Errorf("client error %q (%T): want a connection error, not corrupt data", err, err)
	}
	if !strings.Contains(err.Error(), "incomplete response") {
		t.Errorf("client error %q does not say the response was incomplete", err)
	}
	if l := log.String(); !strings.Contains(l, "getbundle: ") || !strings.Contains(l, "timeout") {
		t.Errorf("server log does not say why the stream was cut:\n%s", l)
	}
}
