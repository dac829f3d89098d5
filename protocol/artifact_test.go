package protocol_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 13 artifacts on both databases: the round trip, idempotency, the size limit, refusals,
// and evidence that names an artifact.

func TestArtifactRoundTrip(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx := context.Background()
		alice := agent("alice", "read,write")
		content := []byte("go test ./...\nok  \tparley\t0.412s\n")
		put, err := svc.PutArtifact(ctx, alice, content, "text/plain; charset=UTF-8")
		if err != nil {
			t.Fatal(err)
		}
		want := protocol.ArtifactInfo{Ref: protocol.ArtifactRef(content), Size: int64(len(content)), MediaType: "text/plain; charset=utf-8"}
		if *put != want {
			t.Fatalf("put answered %+v, want %+v", put, want)
		}
		if !strings.HasPrefix(put.Ref, "sha256:") || len(put.Ref) != 7+64 {
			t.Errorf("ref %q is not sha256:<64 hex>", put.Ref)
		}
		got, err := svc.GetArtifact(ctx, reader, []byte(`{"ref":"`+put.Ref+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got.ArtifactInfo != want || string(got.Content) != string(content) {
			t.Errorf("get answered %+v %q, want %+v %q", got.ArtifactInfo, got.Content, want, content)
		}
		// The same bytes again, by someone else and with another media type: the same artifact.
		again, err := svc.PutArtifact(ctx, agent("bob", "write"), content, "application/x-log")
		if err != nil {
			t.Fatal(err)
		}
		if *again != want {
			t.Errorf("the same bytes again answered %+v, want the stored %+v", again, want)
		}
		if rows := artifactRows(t, db); rows != 1 {
			t.Errorf("%d artifacts stored after the same bytes twice, want 1", rows)
		}
		// Bytes without a media type are application/octet-stream.
		bin, err := svc.PutArtifact(ctx, alice, []byte{0, 1, 2}, "")
		if err != nil {
			t.Fatal(err)
		}
		if bin.MediaType != "application/octet-stream" {
			t.Errorf("bytes without a media type are stored as %q", bin.MediaType)
		}
	})
}

// artifactRows counts the artifacts stored.
func artifactRows(t *testing.T, db *storage.DB) int {
	t.Helper()
	var rows int
	if err := db.NewRaw("SELECT count(*) FROM artifacts").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestArtifactRefusals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.ArtifactMaxBytes = 64
		svc := newService(t, db, limits)
		ctx := context.Background()
		alice := agent("alice", "read,write")
		exact := []byte(strings.Repeat("a", 64))
		if _, err := svc.PutArtifact(ctx, alice, exact, "text/plain"); err != nil {
			t.Fatalf("an artifact of artifact_max_bytes: %v", err)
		}
		stored := protocol.ArtifactRef(exact)
		cases := []struct {
			name string
			run  func() error
			want protocol.Reason
		}{
			{"one byte over artifact_max_bytes", func() error {
				_, err := svc.PutArtifact(ctx, alice, []byte(strings.Repeat("b", 65)), "text/plain")
				return err
			}, protocol.ReasonPayloadTooLarge},
			{"too large decides before the token", func() error {
				_, err := svc.PutArtifact(ctx, nil, []byte(strings.Repeat("b", 65)), "")
				return err
			}, protocol.ReasonPayloadTooLarge},
			{"no token", func() error { _, err := svc.PutArtifact(ctx, nil, []byte("x"), ""); return err }, protocol.ReasonUnauthenticated},
			{"empty", func() error { _, err := svc.PutArtifact(ctx, alice, nil, ""); return err }, protocol.ReasonInvalidBody},
			{"not a media type", func() error { _, err := svc.PutArtifact(ctx, alice, []byte("x"), "text"); return err }, protocol.ReasonInvalidBody},
			{"a reader may not store", func() error { _, err := svc.PutArtifact(ctx, reader, []byte("x"), ""); return err }, protocol.ReasonTokenRightMissing},
			{"get without a token", func() error { _, err := svc.GetArtifact(ctx, nil, []byte(`{"ref":"`+stored+`"}`)); return err }, protocol.ReasonUnauthenticated},
			{"get a malformed ref", func() error { _, err := svc.GetArtifact(ctx, reader, []byte(`{"ref":"sha256:AB"}`)); return err }, protocol.ReasonInvalidBody},
			{"get with an unknown field", func() error {
				_, err := svc.GetArtifact(ctx, reader, []byte(`{"ref":"`+stored+`","x":1}`))
				return err
			}, protocol.ReasonInvalidBody},
			{"get an artifact never stored", func() error {
				_, err := svc.GetArtifact(ctx, reader, []byte(`{"ref":"sha256:`+strings.Repeat("0", 64)+`"}`))
				return err
			}, protocol.ReasonNotFound},
			{"put input that is no base64", func() error {
				_, err := svc.PutArtifactInput(ctx, alice, []byte(`{"content_base64":"not base64!"}`))
				return err
			}, protocol.ReasonInvalidBody},
			{"put input without content", func() error {
				_, err := svc.PutArtifactInput(ctx, alice, []byte(`{"media_type":"text/plain"}`))
				return err
			}, protocol.ReasonInvalidBody},
			{"put input over the limit once decoded", func() error {
				b64 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("c", 65)))
				_, err := svc.PutArtifactInput(ctx, alice, []byte(`{"content_base64":"`+b64+`"}`))
				return err
			}, protocol.ReasonPayloadTooLarge},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { wantRefused(t, c.run(), c.want) })
		}
		if rows := artifactRows(t, db); rows != 1 {
			t.Errorf("%d artifacts stored after the refusals, want the 1 accepted", rows)
		}
	})
}

// Evidence of kind artifact must name a stored artifact: over assert, attest, refute and
// verify alike, since all of them decode evidence the same way.
func TestArtifactEvidence(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx := context.Background()
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		put, err := svc.PutArtifact(ctx, alice, []byte("PASS\n"), "text/plain")
		if err != nil {
			t.Fatal(err)
		}
		cited := `[{"kind":"artifact","ref":"` + put.Ref + `","note":"the build log"}]`
		claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"the build passes","evidence":`+cited+`}`)
		if len(claim.Evidence) != 1 || claim.Evidence[0].Ref != put.Ref {
			t.Errorf("the claim's evidence is %+v", claim.Evidence)
		}
		missing := `[{"kind":"artifact","ref":"sha256:` + strings.Repeat("e", 64) + `"}]`
		_, err = claimOp(svc, bob, "attest", `{"claim":"`+claim.ID+`","evidence":`+missing+`}`)
		e := wantRefused(t, err, protocol.ReasonInvalidBody)
		if !strings.Contains(e.Message, "not in the artifact store") {
			t.Errorf("the refusal says %q, not that the artifact is missing", e.Message)
		}
		if got := mustClaim(t, svc, reader, "read", `{"claim":"`+claim.ID+`"}`); len(got.Attestations) != 0 || got.State != protocol.ClaimUnverified {
			t.Errorf("a refused attestation changed the claim: %+v", got)
		}
		mustClaim(t, svc, bob, "attest", `{"claim":"`+claim.ID+`","evidence":`+cited+`}`)
	})
}

// What is served inline and what as an attachment: nothing that a browser would run.
func TestServeArtifactAs(t *testing.T) {
	octet := protocol.ArtifactServing{MediaType: "application/octet-stream", Attachment: true}
	cases := []struct {
		stored string
		want   protocol.ArtifactServing
	}{
		{"text/plain; charset=utf-8", protocol.ArtifactServing{MediaType: "text/plain; charset=utf-8"}},
		{"text/plain", protocol.ArtifactServing{MediaType: "text/plain; charset=utf-8"}},
		{"text/plain; charset=iso-8859-1", protocol.ArtifactServing{MediaType: "text/plain; charset=iso-8859-1"}},
		{"text/plain; charset=utf-7", protocol.ArtifactServing{MediaType: "text/plain; charset=utf-8"}},
		{"image/png", protocol.ArtifactServing{MediaType: "image/png"}},
		{"image/jpeg", protocol.ArtifactServing{MediaType: "image/jpeg"}},
		{"text/html; charset=utf-8", octet},
		{"application/xhtml+xml", octet},
		{"image/svg+xml", octet},
		{"text/javascript", octet},
		{"application/pdf", octet},
		{"application/octet-stream", octet},
		{"not a type", octet},
	}
	for _, c := range cases {
		if got := protocol.ServeArtifactAs(c.stored); got != c.want {
			t.Errorf("%q is served as %+v, want %+v", c.stored, got, c.want)
		}
	}
}

// Storing an artifact and registering a key are writes: counted against writes_per_minute,
// and a refused one stores nothing. A key registered again is no write.
func TestEvidenceWritesCount(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := generous()
		limits.WritesPerMinute = 2
		svc := newService(t, db, limits)
		ctx := context.Background()
		alice := agent("alice", "read,write")
		// Real Ed25519 keys: a weak key (all zeros, small order) is refused before any count.
		publicKey := func(seed string) string {
			pub := ed25519.NewKeyFromSeed([]byte(strings.Repeat(seed, 32))).Public().(ed25519.PublicKey)
			return `{"public_key":"` + base64.StdEncoding.EncodeToString(pub) + `"}`
		}
		key := publicKey("a")
		if _, err := svc.PutArtifact(ctx, alice, []byte("one"), ""); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RegisterKey(ctx, alice, []byte(key)); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RegisterKey(ctx, alice, []byte(key)); err != nil {
			t.Fatalf("a key registered again was counted: %v", err)
		}
		_, err := svc.PutArtifact(ctx, alice, []byte("two"), "")
		wantRefused(t, err, protocol.ReasonRateLimited)
		_, err = svc.GetArtifact(ctx, reader, []byte(`{"ref":"`+protocol.ArtifactRef([]byte("two"))+`"}`))
		wantRefused(t, err, protocol.ReasonNotFound)
		other := publicKey("k")
		_, err = svc.RegisterKey(ctx, alice, []byte(other))
		wantRefused(t, err, protocol.ReasonRateLimited)
		if keys, err := svc.ListKeys(ctx, alice, []byte(`{}`)); err != nil || len(keys.Keys) != 1 {
			t.Errorf("after a refused registration alice has %v keys (%v), want 1", keys, err)
		}
	})
}
