package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
)

// The realm key (PROTOCOL.md § 14): made on the first start, kept in the database, the same
// for every start after, in the manifest beside realm, and printed by parley realm-key.
func TestRealmKey(t *testing.T) {
	eachKind(t, func(t *testing.T, dbURL string) {
		srv := startServe(t, "--db", dbURL, "--realm", "lab")
		code, body := get(t, srv.base+"/v1/manifest")
		srv.stop(syscall.SIGTERM)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/manifest = %d %s", code, body)
		}
		var m struct {
			Realm    string `json:"realm"`
			RealmKey string `json:"realm_key"`
		}
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		if m.Realm != "lab" || !strings.HasPrefix(m.RealmKey, "did:key:z6Mk") {
			t.Fatalf("manifest realm %q realm_key %q", m.Realm, m.RealmKey)
		}
		if _, err := signed.ParseDIDKey(m.RealmKey); err != nil {
			t.Errorf("realm_key: %v", err)
		}
		printed := strings.TrimSpace(parley(t, "realm-key", "--db", dbURL).output(t))
		if printed != m.RealmKey {
			t.Errorf("parley realm-key printed %q, the manifest says %q", printed, m.RealmKey)
		}
		// A restart keeps it.
		srv = startServe(t, "--db", dbURL, "--realm", "lab")
		_, body = get(t, srv.base+"/v1/manifest")
		srv.stop(syscall.SIGTERM)
		if !strings.Contains(body, `"realm_key":"`+m.RealmKey+`"`) {
			t.Errorf("the realm key changed across restarts: %s", body)
		}
	})
}

// Instances that start at once on one empty database end up with one realm key.
func TestRealmKeyConcurrentFirstStarts(t *testing.T) {
	eachKind(t, func(t *testing.T, dbURL string) {
		ctx := context.Background()
		first := openDB(t, dbURL)
		if _, err := migrations.Up(ctx, first); err != nil {
			t.Fatal(err)
		}
		const starts = 8
		dids := make([]string, starts)
		errs := make([]error, starts)
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := range starts {
			db := first
			if i > 0 {
				db = openDB(t, dbURL)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				key, err := protocol.LoadRealmKey(ctx, db)
				if err != nil {
					errs[i] = err
					return
				}
				dids[i] = key.DID()
			}()
		}
		close(gate)
		wg.Wait()
		for i := range starts {
			if errs[i] != nil {
				t.Fatalf("start %d: %v", i, errs[i])
			}
			if dids[i] != dids[0] {
				t.Errorf("start %d has realm key %s, start 0 has %s", i, dids[i], dids[0])
			}
		}
	})
}
