//go:build linux || windows

package wireproto

import (
	"net"
	"syscall"
)

// tcpRaw is c as a TCP connection with access to its descriptor; ok is
// false for any other connection, which wrapQuickAck leaves as it is.
func tcpRaw(c net.Conn) (tc *net.TCPConn, raw syscall.RawConn, ok bool) {
	tc, ok = c.(*net.TCPConn)
	if !ok {
		return nil, nil, false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	return tc, raw, true
}
