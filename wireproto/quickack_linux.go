package wireproto

import (
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// quickAckConn sets TCP_QUICKACK after every write: sending data soon
// after receiving puts the socket in the kernel's "pingpong" mode,
// where acknowledgements wait for a reply; TCP_QUICKACK leaves it, so
// the response that write asked for is acknowledged as it is read.
type quickAckConn struct {
	*net.TCPConn
	raw syscall.RawConn
}

func wrapQuickAck(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &quickAckConn{TCPConn: tc, raw: raw}
}

func (c *quickAckConn) Write(b []byte) (int, error) {
	n, err := c.TCPConn.Write(b)
	if err == nil {
		c.quickAck()
	}
	return n, err
}

// ReadFrom is *net.TCPConn's, which a bufio.Writer with nothing
// buffered hands a request body to, followed by the same setting.
func (c *quickAckConn) ReadFrom(r io.Reader) (int64, error) {
	n, err := c.TCPConn.ReadFrom(r)
	if err == nil {
		c.quickAck()
	}
	return n, err
}

// quickAck is best effort: where it fails, the kernel's default stays,
// which is slower but correct.
func (c *quickAckConn) quickAck() {
	_ = c.raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
	})
}
