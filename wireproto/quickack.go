package wireproto

// Acknowledging responses at once. hg serve (Python's http.server,
// unbuffered) writes a response's headers and its body in separate
// send(2)s, with Nagle's algorithm on: the body waits until the client
// acknowledges the headers. A client on a kept-alive connection has
// just sent its request, so its kernel treats the connection as
// interactive and delays that acknowledgement, hoping to piggyback it
// on data that never comes, 40 ms on Linux (TCP's delayed ACK). Every
// request but a connection's first paid it: a stream clone's heads
// request, a pull's batch and listkeys. curl shows the same stall on a
// second request down one connection. On Linux, TCP_QUICKACK set after
// each request leaves that mode, so the headers are acknowledged as
// soon as they are read: a pull with nothing to pull from hg serve took
// 17 ms instead of 104 (internal/tune's quickack has the figures).
// Windows delays its acknowledgements too (200 ms by default) and has
// no TCP_QUICKACK; its connections are left as they are
// (quickack_other.go says why).

import (
	"context"
	"net"
)

// quickAckDialer wraps dial so that each TCP connection it returns asks
// for immediate acknowledgements after every write (where the platform
// can; elsewhere it returns dial's connections as they are).
func quickAckDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrapQuickAck(c), nil
	}
}
