package browser

import (
	"fmt"
	"os"
	"testing"

	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/tests/parleybin"
)

// parleyBinary is the parley command, built once for the tests of this package.
var parleyBinary string

func TestMain(m *testing.M) {
	bin, err := parleybin.Build("")
	if err != nil {
		fmt.Fprintf(os.Stderr, "building parley: %v\n", err)
		os.Exit(2)
	}
	parleyBinary = bin
	storagetest.Main(m)
}
