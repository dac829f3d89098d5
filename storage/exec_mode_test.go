package storage_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The hot path's statements are prepared by name on the server (pgx's statement cache) unless
// the URL names another default_query_exec_mode: behind pgbouncer before 1.21 the operator
// names cache_describe, and then nothing is prepared by name, which the pooler could hand
// to another client's transaction.
func TestPostgresExecModeFromURL(t *testing.T) {
	url := storagetest.Open(t, storage.Postgres).URL()
	for _, c := range []struct {
		query    string
		prepared bool
	}{
		{query: "", prepared: true},
		{query: "&default_query_exec_mode=cache_describe", prepared: false},
		{query: "&default_query_exec_mode=simple_protocol", prepared: false},
	} {
		t.Run(c.query, func(t *testing.T) {
			ctx := context.Background()
			db, err := storage.Open(ctx, url+c.query)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1) // one connection, so one session's prepared statements
			if _, err := db.TokenByHash(ctx, "no such hash"); err == nil {
				t.Fatal("a token was found for a hash never stored")
			}
			var n int
			if err := db.NewRaw("SELECT COUNT(*) FROM pg_prepared_statements").Scan(ctx, &n); err != nil {
				t.Fatal(err)
			}
			if (n > 0) != c.prepared {
				t.Errorf("%d statements prepared by name after a token lookup; want prepared: %v", n, c.prepared)
			}
		})
	}
}
