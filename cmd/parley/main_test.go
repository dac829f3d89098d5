package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/tests/parleybin"
)

// testVersion is stamped into the binary under test, as a release build stamps its version.
const testVersion = "v0.0.0-clitest"

// parleyBinary is the parley command built once for every test of this package.
var parleyBinary string

func TestMain(m *testing.M) {
	bin, err := parleybin.Build(testVersion)
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parley: %v\n", err)
		os.Exit(2)
	}
	parleyBinary = bin
	storagetest.Main(m)
}
