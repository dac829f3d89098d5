package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestHistoryIsAppendOnly is § 15's append-only record: a mark does not rewrite supersession,
// every claim event names its cause, the seal keeps its quorum, stances carry provenance.
func TestHistoryIsAppendOnly(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		ver := agent("vera", "read,verify")
		ada := human("ada")
		th := send(t, svc, alice, envelope("ask", "", "Which port?")).Thread.ID
		assert := func(statement string, more string) *protocol.ClaimView {
			return mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":`+proof+more+`}`)
		}
		a, b := assert("8080", ""), assert("8081", "")
		c := assert("8082", `,"supersedes":["`+a.ID+`","`+b.ID+`"]`)
		mustClaim(t, svc, ada, "mark", `{"claim":"`+a.ID+`","state":"supported"}`)
		c = mustClaim(t, svc, reader, "read", `{"claim":"`+c.ID+`"}`)
		if !slices.Equal(c.Supersedes, []string{a.ID, b.ID}) {
			t.Errorf("after a mark of %s, %s supersedes %v", a.ID, c.ID, c.Supersedes)
		}
		a = mustClaim(t, svc, reader, "read", `{"claim":"`+a.ID+`"}`)
		if a.SupersededBy == nil || *a.SupersededBy != c.ID || a.State != "supported" {
			t.Errorf("%s after its mark: state %s, superseded_by %v", a.ID, a.State, a.SupersededBy)
		}
		// Superseded once, it is not superseded again.
		_, err := claimOp(svc, alice, "assert", `{"thread":"`+th+`","statement":"x","evidence":`+proof+`,"supersedes":["`+a.ID+`"]}`)
		wantRefused(t, err, protocol.ReasonInvalidTransition)

		// Stances: ids, provenance, and events that name them.
		d := assert("9090", "")
		att := mustClaim(t, svc, bob, "attest", `{"claim":"`+d.ID+`","evidence":`+proof+`,"provenance":{"model":"m-1","client":"c-1"}}`).Attestations[0]
		if att.Provenance == nil || *att.Provenance.Model != "m-1" || *att.Provenance.Client != "c-1" {
			t.Errorf("attestation provenance %+v", att.Provenance)
		}
		// Every export format carries the provenance where it carries the author.
		for _, format := range []string{"json", "graphml", "dot"} {
			var buf bytes.Buffer
			if err := svc.WriteExport(context.Background(), 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "m-1") || !strings.Contains(buf.String(), "c-1") {
				t.Errorf("the %s export lacks the attestation's provenance", format)
			}
		}
		sealed := mustClaim(t, svc, ver, "verify", `{"claim":"`+d.ID+`"}`)
		if sealed.State != "verified" || sealed.Quorum.Of != 1 || sealed.Quorum.Verifiers != 1 {
			t.Errorf("sealed: %s %+v", sealed.State, sealed.Quorum)
		}
		stances := map[string]string{} // event act on d → stance
		var supersededBy []string
		for _, ev := range events(t, svc, th) {
			switch {
			case ev.Subject == d.ID && (ev.Act == "attest" || ev.Act == "verify"):
				if ev.Stance == nil {
					t.Errorf("event %s (%s) names no stance", ev.ID, ev.Act)
					continue
				}
				stances[ev.Act] = *ev.Stance
			case ev.Act == "supersede":
				if ev.Claim != nil {
					supersededBy = append(supersededBy, ev.Subject+">"+*ev.Claim)
				}
			}
		}
		if stances["attest"] != att.ID || stances["verify"] != sealed.Verifications[0].ID || att.ID[:4] != "att_" || sealed.Verifications[0].ID[:4] != "ver_" {
			t.Errorf("events name stances %v; the claim has %s and %s", stances, att.ID, sealed.Verifications[0].ID)
		}
		if !slices.Equal(supersededBy, []string{a.ID + ">" + c.ID, b.ID + ">" + c.ID}) {
			t.Errorf("supersede events name %v", supersededBy)
		}

		// The quorum in force at sealing stays, whatever the reader's limit is now.
		l := generous()
		l.VerifyQuorum = 3
		later := protocol.New(db, protocol.Options{Limits: l})
		if got := mustClaim(t, later, reader, "read", `{"claim":"`+d.ID+`"}`); got.Quorum.Of != 1 {
			t.Errorf("a claim sealed at quorum 1 reads quorum %+v under a limit of 3", got.Quorum)
		}
		if got := mustClaim(t, later, reader, "read", `{"claim":"`+a.ID+`"}`); got.Quorum.Of != 3 {
			t.Errorf("an unsealed claim reads quorum %+v, want the limit in force (3)", got.Quorum)
		}
	})
}

// TestEveryExportCarriesProvenance: wherever an export names an author — a message, a claim,
// a stance — it carries the provenance that author's write gave (§ 15): the JSON export, the
// native graph, GraphML, DOT and AIF (which leaves messages out).
func TestEveryExportCarriesProvenance(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		th := send(t, svc, alice, `{"kind":"ask","body":"Which port?","provenance":{"model":"msg-model","client":"msg-client"}}`).Thread.ID
		cl := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"8080","evidence":`+proof+
			`,"provenance":{"model":"claim-model","client":"claim-client"}}`)
		mustClaim(t, svc, bob, "attest", `{"claim":"`+cl.ID+`","evidence":`+proof+`,"provenance":{"model":"att-model","client":"att-client"}}`)
		mustClaim(t, svc, bob, "refute", `{"claim":"`+cl.ID+`","evidence":`+proof+`,"body":"8081","provenance":{"model":"ref-model"}}`)
		authors := []string{"msg", "claim", "att", "ref"}
		docs := map[string]string{}
		for _, format := range []string{"json", "graphml", "dot", "aif"} {
			var buf bytes.Buffer
			if err := svc.WriteExport(context.Background(), 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			docs[format] = buf.String()
		}
		g, err := svc.Graph(context.Background(), reader, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		native, _ := json.Marshal(g.Graph)
		docs["native graph"] = string(native)
		for format, doc := range docs {
			for _, author := range authors {
				if format == "aif" && author == "msg" {
					continue // AIF has no place for messages
				}
				if !strings.Contains(doc, author+"-model") {
					t.Errorf("the %s export lacks the %s's provenance", format, author)
				}
				if author != "ref" && !strings.Contains(doc, author+"-client") {
					t.Errorf("the %s export lacks the %s's provenance client", format, author)
				}
			}
		}
		// In AIF on the nodes that name the author: the claim's L-node and locution, the
		// stances' premises.
		var aif graph.AIF
		if err := json.Unmarshal([]byte(docs["aif"]), &aif); err != nil {
			t.Fatal(err)
		}
		carried := map[string]string{}
		for _, n := range aif.Nodes {
			if n.Provenance != nil && n.Provenance.Model != nil {
				carried[n.Type+" "+*n.Provenance.Model] = n.NodeID
			}
		}
		for _, want := range []string{"L claim-model", "I att-model", "I ref-model"} {
			if carried[want] == "" {
				t.Errorf("AIF: no %s-node carries %s; carried %v", strings.Fields(want)[0], strings.Fields(want)[1], carried)
			}
		}
		if len(aif.Locutions) != 1 || aif.Locutions[0].Provenance == nil || *aif.Locutions[0].Provenance.Model != "claim-model" {
			t.Errorf("AIF locutions %+v lack the claim's provenance", aif.Locutions)
		}
	})
}
