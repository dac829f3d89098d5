package reputation_test

import (
	"testing"

	"github.com/parleyforum/parley/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m) }
