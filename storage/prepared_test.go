package storage_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// bun writes every value into the SQL text, so no two statements are alike: a server-side
// prepared statement per query would cost a round trip to prepare and one to run, and fill
// the server with statements never used again. Queries go as the simple protocol instead.
func TestPostgresQueriesPrepareNothing(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := 0; i < 3; i++ {
		var n int
		if err := conn.NewSelect().Model((*storage.Thread)(nil)).ColumnExpr("COUNT(*)").Where("id > ?", i).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
	}
	var prepared int
	if err := conn.NewRaw("SELECT COUNT(*) FROM pg_prepared_statements").Scan(ctx, &prepared); err != nil {
		t.Fatal(err)
	}
	if prepared != 0 {
		t.Errorf("%d statements prepared on the server by three queries", prepared)
	}
}
