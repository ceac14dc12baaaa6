//go:build !linux

package wireproto

import "net"

// wrapQuickAck has nothing to set where TCP_QUICKACK does not exist.
// Windows, whose delayed ACK is 200 ms, could ask for an acknowledgement
// of every segment instead (SIO_TCP_SET_ACK_FREQUENCY 1), but that
// setting holds for the whole connection, a long stream clone's
// included, and it has not been measured on Windows (Wine refuses it):
// until it is, Windows keeps its default.
func wrapQuickAck(c net.Conn) net.Conn { return c }
