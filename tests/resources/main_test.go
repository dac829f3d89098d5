//go:build resources

// Package resources holds Parley's resource matrix (PROTOCOL.md § 19): for every route and
// every MCP tool, what its weakest caller can make a real parley serve spend — memory,
// connection time, answer time — on the largest forum the limits allow, alone and ten at
// once, reading and writing slowly, and with its database hung. Each cell is held to a bound
// of § 19 and of its route's class; the table of what was measured is in docs/reliability.md
// (The resource matrix), written by this test.
package resources

import (
	"fmt"
	"os"
	"testing"

	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/tests/parleybin"
)

// parleyBinary is the parley command the matrix runs, built once for the package without the
// race detector: the detector's shadow memory multiplies what the process holds several
// times over and its checks slow every request, so that the figures would say nothing of the
// server an operator runs. The race detector checks the same code in every other suite.
var parleyBinary string

func TestMain(m *testing.M) {
	bin, err := parleybin.BuildUninstrumented()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parley: %v\n", err)
		os.Exit(2)
	}
	parleyBinary = bin
	storagetest.Main(m)
}
