//go:build !unix

package web

import "net"

// clientGone cannot tell on this system; a long poll then ends after its wait_seconds.
func clientGone(net.Conn) bool { return false }
