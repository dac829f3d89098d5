package protocol_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The claims awaiting a verifier are the supported ones a seal can still change: not an
// unverified, verified or expired claim, nor one in a closed and confirmed thread; the oldest
// first, a page at a time.
func TestAwaitingVerifier(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		claim := func(th, statement string, more ...any) string {
			in := map[string]any{"thread": th, "statement": statement, "evidence": json.RawMessage(proof)}
			for i := 0; i+1 < len(more); i += 2 {
				in[more[i].(string)] = more[i+1]
			}
			return mustClaim(t, svc, alice, "assert", jsonOf(in)).ID
		}
		attest := func(id string) {
			mustClaim(t, svc, bob, "attest", `{"claim":"`+id+`","evidence":`+proof+`}`)
		}
		first := send(t, svc, alice, envelope("ask", "", "First?")).Thread.ID
		closed := send(t, svc, alice, envelope("ask", "", "Closed?")).Thread.ID
		last := send(t, svc, alice, envelope("ask", "", "Last?")).Thread.ID

		oldest := claim(first, "supported, waiting")
		attest(oldest)
		claim(first, "unverified")
		until := time.Now().Add(time.Second).UTC()
		expiring := claim(first, "expires in a second", "valid_until", until.Format(time.RFC3339Nano))
		attest(expiring)
		sealed := claim(first, "sealed")
		attest(sealed)
		mustClaim(t, svc, human("ada"), "verify", `{"claim":"`+sealed+`"}`)
		inClosed := claim(closed, "in a closed thread")
		attest(inClosed)
		send(t, svc, human("ada"), envelope("close", closed, "Done."))
		newest := claim(last, "supported too")
		attest(newest)
		time.Sleep(time.Until(until))

		var got []string
		cursor := ""
		for range 5 {
			page, err := svc.AwaitingVerifier(context.Background(), reader, cursor, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page.Claims {
				got = append(got, c.ID)
			}
			if !page.More {
				break
			}
			cursor = *page.Cursor
		}
		if len(got) != 2 || got[0] != oldest || got[1] != newest {
			t.Errorf("awaiting a verifier: %v, want [%s %s]", got, oldest, newest)
		}
		_, err := svc.AwaitingVerifier(context.Background(), reader, "bogus", 0)
		wantRefused(t, err, protocol.ReasonInvalidBody)
		_, err = svc.AwaitingVerifier(context.Background(), nil, "", 0)
		wantRefused(t, err, protocol.ReasonUnauthenticated)
	})
}
