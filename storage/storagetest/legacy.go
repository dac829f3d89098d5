package storagetest

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// SignLegacy gives a stored stance the version 1 signature of the signed profile, written
// straight into its row as a forum before version 2 stored it (PROTOCOL.md § 14, last
// bullet): an Ed25519 signature by priv over the JCS form of {at, by, claim, evidence,
// statement_sha256}, made at the time at. No operation accepts such a signature any more,
// yet stances stored with one are still read, exported as legacy_signature and checked by
// verify-export; this is how tests make them. stance is the stance's id as returned (att_N,
// ref_N or ver_N) and key the id of a key registered to the stance's author (key_N). It
// answers the signature (base64).
func SignLegacy(t testing.TB, db *storage.DB, stance, key string, priv ed25519.PrivateKey, at time.Time) string {
	t.Helper()
	ctx := context.Background()
	stanceID, keyID := numberOf(t, stance), numberOf(t, key)
	var (
		claimID            int64
		identity, evidence string
		statement          string
	)
	if err := db.NewSelect().Table("claim_stances").Column("claim_id", "identity", "evidence").
		Where("id = ?", stanceID).Scan(ctx, &claimID, &identity, &evidence); err != nil {
		t.Fatalf("SignLegacy: stance %s: %v", stance, err)
	}
	if err := db.NewSelect().Table("claims").Column("statement").Where("id = ?", claimID).Scan(ctx, &statement); err != nil {
		t.Fatalf("SignLegacy: the claim of %s: %v", stance, err)
	}
	var items []signed.Evidence
	if err := json.Unmarshal([]byte(evidence), &items); err != nil {
		t.Fatalf("SignLegacy: the evidence of %s: %v", stance, err)
	}
	stamp := at.UTC().Format(time.RFC3339)
	payload := signed.NewPayload("cl_"+strconv.FormatInt(claimID, 10), statement, items, identity, stamp)
	sig, err := signed.Sign(priv, payload)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.NewUpdate().Table("claim_stances").
		Set("signature_key_id = ?", keyID).Set("signature_at = ?", stamp).Set("signature = ?", sig).
		Where("id = ?", stanceID).Exec(ctx)
	if err != nil {
		t.Fatalf("SignLegacy: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("SignLegacy: %d rows of %s signed, want 1", n, stance)
	}
	return sig
}

// numberOf is the number of an id such as att_3 or key_1.
func numberOf(t testing.TB, id string) int64 {
	t.Helper()
	_, digits, ok := strings.Cut(id, "_")
	n, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil {
		t.Fatalf("SignLegacy: %q is not an id of the form prefix_N", id)
	}
	return n
}
