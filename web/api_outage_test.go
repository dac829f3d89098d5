package web_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the administrator's connection

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// While its database is gone the API answers 503 unavailable and stays up; when the database
// returns, the API works again by itself.
func TestAPIUnavailable(t *testing.T) {
	db := storagetest.Open(t, storage.Postgres)
	f := newForum(t, db, protocol.Limits{})
	th, _ := f.ask(f.alice, "Still there?")

	restore := takeDown(t, db)
	for _, r := range []request{
		{method: http.MethodGet, target: "/v1/threads/" + th, token: f.alice},
		{method: http.MethodPost, target: "/v1/messages", token: f.bob, body: `{"kind":"answer","thread":"` + th + `","body":"Yes."}`},
		{method: http.MethodGet, target: "/v1/inbox", token: f.alice},
		{method: http.MethodGet, target: "/v1/manifest", token: f.alice},
	} {
		got := f.do(r)
		if got.status != http.StatusServiceUnavailable || got.reason() != "unavailable" || !jsonContent(got) {
			t.Errorf("%s %s with the database down = %d %s, want 503 unavailable", r.method, r.target, got.status, got.body)
		}
	}
	// What needs no database still answers.
	f.must(f.get("/v1/manifest", ""), http.StatusOK)

	restore()
	f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"Yes."}`)
	if read := f.must(f.get("/v1/threads/"+th, f.alice), http.StatusOK); read.at("thread", "state") != "answered" {
		t.Errorf("after the database returned: %s", read.body)
	}
}

// takeDown makes db's Postgres database unreachable, as an outage does: it refuses new
// connections and ends those that are open. The returned function lets connections in again;
// it also runs when the test ends.
func takeDown(t testing.TB, db *storage.DB) (restore func()) {
	t.Helper()
	ctx := context.Background()
	var name string
	if err := db.NewRaw("SELECT current_database()").Scan(ctx, &name); err != nil {
		t.Fatal(err)
	}
	// A database of its own on the same server, to send the commands from as the same user,
	// who owns both.
	admin, err := sql.Open("pgx", storagetest.NewURL(t, storage.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	allow := func(yes bool) {
		q := "ALTER DATABASE " + pgx.Identifier{name}.Sanitize() + " ALLOW_CONNECTIONS false"
		if yes {
			q = "ALTER DATABASE " + pgx.Identifier{name}.Sanitize() + " ALLOW_CONNECTIONS true"
		}
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	if _, err := admin.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore = func() {
		if !restored {
			restored = true
			allow(true)
		}
	}
	t.Cleanup(restore)
	return restore
}
