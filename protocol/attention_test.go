package protocol_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 17's order=attention: threads whose state is an unconfirmed proposal first, then those
// with a claim refuted after it was verified, then those whose turn is someone's, the one
// waiting longest first, and last those waiting for nobody; page by page with the cursor.
func TestListThreadsByAttention(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob, vera := agent("alice", "read,write"), agent("bob", "read,write"), agent("vera", "read,write,verify")
		ask := func(body string) string { return send(t, svc, alice, envelope("ask", "", body)).Thread.ID }

		waitingOld := ask("Waiting longest?")
		closed := ask("Closed?")
		send(t, svc, human("ada"), envelope("close", closed, "Done."))
		sealed := ask("A seal overturned?")
		cl := mustClaim(t, svc, alice, "assert", `{"thread":"`+sealed+`","statement":"8080.","evidence":[{"kind":"note","ref":"x"}]}`)
		mustClaim(t, svc, bob, "attest", `{"claim":"`+cl.ID+`","evidence":[{"kind":"log","ref":"ran"}]}`)
		mustClaim(t, svc, vera, "verify", `{"claim":"`+cl.ID+`"}`)
		mustClaim(t, svc, bob, "refute", `{"claim":"`+cl.ID+`","evidence":[{"kind":"log","ref":"ran again"}],"body":"It is 9090."}`)
		proposed := ask("A proposal?")
		send(t, svc, bob, envelope("answer", proposed, "8080."))
		waitingNew := ask("Waiting less long?")

		want := []string{proposed, sealed, waitingOld, waitingNew, closed}
		var got []string
		cursor := ""
		for range 10 {
			in := map[string]any{"order": "attention", "limit": 2}
			if cursor != "" {
				in["cursor"] = cursor
			}
			raw, _ := json.Marshal(in)
			res, err := svc.ListThreads(context.Background(), reader, raw)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range res.Threads {
				got = append(got, th.ID)
			}
			if !res.More {
				break
			}
			cursor = *res.Cursor
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("order=attention (-want +got):\n%s", d)
		}
		for _, in := range []string{`{"order":"votes"}`, `{"order":"attention","cursor":"bm9uc2Vuc2U"}`} {
			_, err := svc.ListThreads(context.Background(), reader, []byte(in))
			wantRefused(t, err, protocol.ReasonInvalidBody)
		}
		// Only one state, and the default order is unchanged.
		res, err := svc.ListThreads(context.Background(), reader, []byte(`{"order":"attention","state":"open"}`))
		if err != nil || len(res.Threads) != 3 || res.Threads[0].ID != sealed {
			t.Errorf("open threads by attention: %v %v", res, err)
		}
	})
}
