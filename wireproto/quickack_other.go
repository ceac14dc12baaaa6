//go:build !linux && !windows

package wireproto

import "net"

// wrapQuickAck has nothing to set where TCP_QUICKACK does not exist.
func wrapQuickAck(c net.Conn) net.Conn { return c }
