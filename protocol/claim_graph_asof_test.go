package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A graph read in pages is one graph (§ 15, paged reads are read as of one point). Its pages
// are read while claims of the first page are superseded and refuted, others attested and
// refuted, new claims asserted, and a write that was running when the first page was read
// commits (on Postgres with a smaller claim number than one committed beside it): together
// the pages are the graph the first page's snapshot held — the same nodes in the same
// states, with the same labels and edges, nothing written after it — and every page says
// the first page's point.
func TestGraphPagesAreReadAsOfTheFirstPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		l := generous()
		svc := protocol.New(db, protocol.Options{Limits: l, ReadPageBytes: 2500})
		whole := protocol.New(db, protocol.Options{Limits: l})
		alice, bob, carol := agent("alice", "read,write"), agent("bob", "read,write"), agent("carol", "read,write")
		opened := send(t, svc, alice, envelope("ask", "", "Which ports are open?"))
		th := opened.Thread.ID
		other := send(t, svc, carol, envelope("ask", "", "Which hosts answer?")).Thread.ID
		var claims []string
		for i := range 10 {
			claims = append(claims, mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port `+fmt.Sprint(8080+i)+` is open","evidence":`+proof+`}`).ID)
			if i%2 == 0 {
				mustClaim(t, svc, bob, "attest", `{"claim":"`+claims[i]+`","evidence":`+proof+`,"note":"it answered"}`)
			}
		}

		// A write runs while the first page is read: a refutation of the last claim and a new
		// claim, not committed until released.
		release, written := holdClaimWrite(t, db, mustID(t, th), idOf(t, opened.Message.ID, "msg_"), idOf(t, claims[9], "cl_"))
		if db.Kind() == storage.Postgres {
			// Beside it, in another thread (the held write holds this one's claims), a claim
			// is committed with larger numbers than the held one's: the first page's point.
			mustClaim(t, svc, carol, "assert", `{"thread":"`+other+`","statement":"host 1 answers","evidence":`+proof+`}`)
		}
		first, err := svc.Graph(ctx, reader, []byte(`{"thread":"`+th+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		// The graph as the first page's snapshot held it: nothing has committed since.
		held, err := whole.ClaimGraph(ctx, protocol.ScopeOf(reader), mustID(t, th))
		if err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-written; err != nil {
			t.Fatal(err)
		}
		if first.AsOf == nil || first.AsOf.Event == nil || first.AsOf.Stance == nil || first.NextCursor == nil {
			t.Fatalf("the first page: as_of %+v, next_cursor %v; want a point and more pages", first.AsOf, first.NextCursor)
		}
		if raw, _ := json.Marshal(first); !strings.Contains(string(raw), `"as_of":{"event":"`+*first.AsOf.Event+`"`) {
			t.Errorf("the first page's JSON does not say its as_of: %s", raw)
		}
		var onFirst []string
		for _, n := range first.Graph.Nodes {
			if n.Type == graph.TypeClaim {
				onFirst = append(onFirst, n.ID)
			}
		}
		if len(onFirst) < 2 {
			t.Fatalf("the first page holds %d claims; want at least 2 to write on", len(onFirst))
		}

		// Writes between the pages: the first page's claims superseded and refuted, others
		// attested and refuted, new claims.
		writes := []func(){
			func() {
				mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port 8080 is closed","evidence":`+proof+`,"supersedes":["`+onFirst[0]+`"]}`)
				mustClaim(t, svc, carol, "refute", `{"claim":"`+onFirst[1]+`","evidence":`+proof+`,"body":"it times out"}`)
			},
			func() {
				mustClaim(t, svc, carol, "attest", `{"claim":"`+claims[5]+`","evidence":`+proof+`,"note":"it answered me too"}`)
				mustClaim(t, svc, carol, "refute", `{"claim":"`+claims[8]+`","evidence":`+proof+`,"body":"refused"}`)
				mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"port 9001 is open","evidence":`+proof+`}`)
			},
		}
		pages := []*protocol.GraphResult{first}
		for cursor := first.NextCursor; cursor != nil; {
			if len(writes) > 0 {
				writes[0]()
				writes = writes[1:]
			}
			page, err := svc.Graph(ctx, reader, []byte(`{"thread":"`+th+`","cursor":"`+*cursor+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, page)
			cursor = page.NextCursor
		}
		if len(pages) < 3 {
			t.Errorf("%d pages; want at least 3, so that writes come between them", len(pages))
		}

		got, want := describeGraph(pages...), describeGraph(&protocol.GraphResult{Graph: held})
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the pages give another graph than the first page's snapshot held:\n%s", diffLines(got, want))
		}
		for i, p := range pages {
			if p.AsOf == nil || *p.AsOf.Event != *first.AsOf.Event || *p.AsOf.Stance != *first.AsOf.Stance || !p.AsOf.At.Equal(first.AsOf.At) {
				t.Errorf("page %d says as_of %+v, the first page %+v", i+1, p.AsOf, first.AsOf)
			}
		}

		// Read again from the start, the graph is the new one, at a new point.
		again, err := svc.Graph(ctx, reader, []byte(`{"thread":"`+th+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if *again.AsOf.Event == *first.AsOf.Event {
			t.Errorf("a read from the start after the writes says the old point %s", *again.AsOf.Event)
		}
	})
}

// holdClaimWrite begins a write on thread (of the anchor message) that refutes the claim and
// asserts a new one, each with its event as the operations write them, and commits it only
// when release is closed; written gives its end.
func holdClaimWrite(t *testing.T, db *storage.DB, thread, anchor, claim int64) (release chan struct{}, written chan error) {
	t.Helper()
	return holdWrite(t, db, func(ctx context.Context, f *storage.Forum) error {
		return writeHeldClaim(ctx, f, thread, anchor, claim)
	})
}

// holdWrite runs write in a transaction that it commits only when release is closed;
// written gives its end.
func holdWrite(t *testing.T, db *storage.DB, write func(ctx context.Context, f *storage.Forum) error) (release chan struct{}, written chan error) {
	t.Helper()
	release, written = make(chan struct{}), make(chan error, 1)
	begun := make(chan struct{})
	go func() {
		written <- db.Write(context.Background(), func(ctx context.Context, f *storage.Forum) error {
			if err := write(ctx, f); err != nil {
				return err
			}
			close(begun)
			<-release
			return nil
		})
	}()
	select {
	case <-begun:
	case err := <-written:
		t.Fatalf("the held write: %v", err)
	}
	return release, written
}

// writeHeldClaim refutes the claim and asserts a new one on thread (of the anchor message),
// each with its event as the operations write them.
func writeHeldClaim(ctx context.Context, f *storage.Forum, thread, anchor, claim int64) error {
	now := storage.Now()
	body := "held back"
	st := &storage.Stance{ClaimID: claim, Kind: storage.StanceRefute, Identity: "ainotes:held", AuthorKind: "llm",
		Evidence: `[{"kind":"log","ref":"held"}]`, Body: &body, CreatedAt: now}
	if err := f.InsertStance(ctx, st); err != nil {
		return err
	}
	c, err := f.Claim(ctx, claim)
	if err != nil {
		return err
	}
	from := c.State
	c.State, c.UpdatedAt = "refuted", now
	if err := f.UpdateClaim(ctx, c); err != nil {
		return err
	}
	if err := f.InsertEvent(ctx, &storage.Event{ThreadID: thread, Subject: protocol.ClaimKey(claim), Act: "refute",
		FromState: &from, ToState: "refuted", Origin: "llm", ActorIdentity: "ainotes:held", Label: "held", At: now, StanceID: &st.ID}); err != nil {
		return err
	}
	nc := &storage.Claim{ThreadID: thread, AnchorID: anchor, Statement: "port 7000 is open", Identity: "ainotes:held",
		AuthorKind: "llm", State: "unverified", StateOrigin: "llm", Evidence: `[{"kind":"log","ref":"held"}]`, CreatedAt: now, UpdatedAt: now}
	if err := f.InsertClaim(ctx, nc); err != nil {
		return err
	}
	return f.InsertEvent(ctx, &storage.Event{ThreadID: thread, Subject: protocol.ClaimKey(nc.ID), Act: "assert",
		ToState: "unverified", Origin: "llm", ActorIdentity: "ainotes:held", Label: "held", At: now})
}

// describeGraph is every node and edge of the pages, one line each, sorted: a claim with its
// state, expiry and label, a stance with its author and label, an edge with its kind.
func describeGraph(pages ...*protocol.GraphResult) []string {
	var out []string
	for _, p := range pages {
		for _, n := range p.Graph.Nodes {
			line := n.Type + " " + n.ID
			if n.Type == graph.TypeClaim {
				line += fmt.Sprintf(" %s expired=%v %s", n.State, *n.Expired, n.Grounded)
			} else if n.Type != graph.TypeMessage {
				line += " by " + n.By + " " + string(n.Grounded)
			}
			out = append(out, line)
		}
		for _, e := range p.Graph.Edges {
			out = append(out, "edge "+e.From+" "+e.Kind+" "+e.To)
		}
	}
	sort.Strings(out)
	return out
}

// diffLines lists the lines only one side has.
func diffLines(got, want []string) string {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range list {
			m[l] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var b strings.Builder
	for _, l := range got {
		if !w[l] {
			b.WriteString("  paged only: " + l + "\n")
		}
	}
	for _, l := range want {
		if !g[l] {
			b.WriteString("  held only:  " + l + "\n")
		}
	}
	return b.String()
}

// idOf is the number of a key with prefix.
func idOf(t *testing.T, key, prefix string) int64 {
	t.Helper()
	id, ok := protocol.ParseIDString(key, prefix)
	if !ok {
		t.Fatalf("bad key %s", key)
	}
	return id
}
