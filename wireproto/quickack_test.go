package wireproto

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
)

// TestQuickAckDialer: a connection from the quick-ACK dialer carries a
// request and its answer, several times over, on every platform (under
// Wine too, for make test-windows), and a request body handed over
// whole.
func TestQuickAckDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			// Two writes, as hg serve answers: the head, then the body.
			if _, err := io.WriteString(c, "ok "); err != nil {
				return
			}
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	}()
	dial := quickAckDialer((&net.Dialer{}).DialContext)
	c, err := dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, req := range []string{"capabilities\n", "heads\n", "getbundle\n"} {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != "ok "+req {
			t.Fatalf("answer to %q: %q, %v", req, got, err)
		}
	}
	if f, ok := c.(io.ReaderFrom); ok {
		// A request body handed over whole goes through too.
		if _, err := f.ReadFrom(strings.NewReader("body\n")); err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadString('\n'); err != nil || got != "ok body\n" {
			t.Fatalf("answer to the body: %q, %v", got, err)
		}
	}
}
