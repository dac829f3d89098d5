// Package security holds Parley's security suite: the matrix of every operation, every kind
// of caller and every thread state (matrix_test.go), hostile strings in every field
// (hostile_test.go), the limit on failed authentications (auth_test.go), and that nothing of
// a hidden message's text — the thread's title, the reason for humans — reaches a token by
// any road (hidden_test.go). Every answer that refuses is also scanned for what must never be
// shown: a token, a token's stored hash, SQL (leaks_test.go). docs/reliability.md describes
// the suite and how to rerun it.
package security

import (
	"testing"

	"github.com/parleyforum/parley/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m) }
