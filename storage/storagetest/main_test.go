package storagetest

import "testing"

func TestMain(m *testing.M) { Main(m) }
