//go:build unix

package web

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// clientGone reports whether the peer of conn has closed it. It peeks at the socket without taking anything from it and without waiting: an
// orderly end of the stream (a read of 0 bytes) or a reset means the peer has gone; data
// (a pipelined request) or nothing to read yet means it is still there.
func clientGone(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var buf [1]byte
	_ = raw.Read(func(fd uintptr) bool {
		n, _, err := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		gone = (n == 0 && err == nil) || err == unix.ECONNRESET
		return true // never wait for the socket to become readable
	})
	return gone
}
