package protocol_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The realm key signs a document as an eddsa-jcs-2022 proof that anyone can check with the
// did:key the manifest publishes; two services on one database share the key.
func TestSignAsRealm(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		did := svc.Manifest(nil).RealmKey
		if !strings.HasPrefix(did, "did:key:z6Mk") {
			t.Fatalf("manifest realm_key %q", did)
		}
		if again := protocol.New(db, protocol.Options{}).Manifest(nil).RealmKey; again != did {
			t.Errorf("a second service on the database has realm key %s, the first %s", again, did)
		}
		out, err := svc.SignAsRealm(ctx, []byte(`{"type":"export","realm":"ainotes","sha256":"00"}`))
		if err != nil {
			t.Fatal(err)
		}
		checked, err := signed.Verify(out)
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if checked[0].DID != did {
			t.Errorf("signed by %s, realm key %s", checked[0].DID, did)
		}
	})
}
