package wireproto

import (
	"net"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioTCPSetAckFrequency is mstcpip.h's SIO_TCP_SET_ACK_FREQUENCY
// (_WSAIOW(IOC_VENDOR, 23)), which x/sys/windows does not name.
const sioTCPSetAckFrequency = 0x98000017

// wrapQuickAck asks Windows to acknowledge every segment the connection
// receives: Windows has no TCP_QUICKACK, and its delayed ACK (200 ms by
// default) would hold hg serve's response bodies as Linux's 40 ms does
// (quickack.go). Unlike TCP_QUICKACK the setting stays, so it is made
// once, at dial. Best effort: a Windows (or Wine) that refuses it keeps
// its default. Not measured on Windows itself, where none was at hand;
// the Linux figures are in internal/tune.
func wrapQuickAck(c net.Conn) net.Conn {
	_, raw, ok := tcpRaw(c)
	if !ok {
		return c
	}
	_ = raw.Control(func(fd uintptr) {
		freq := uint32(1)
		var n uint32
		_ = windows.WSAIoctl(windows.Handle(fd), sioTCPSetAckFrequency, (*byte)(unsafe.Pointer(&freq)), uint32(unsafe.Sizeof(freq)), nil, 0, &n, nil, 0)
	})
	return c
}
