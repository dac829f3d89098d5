package protocol_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Every export format that carries custody (json, aif, graphml) holds under the offline check,
// and each tamper of § 14 fails it: a relabelled stance, an edited note, a removed proof, a
// forged binding, one key id with two keys.
func TestExportCustody(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx := context.Background()
		alice := agent("alice", "read,write")
		bob := newSigner(t, svc, agent("bob", "read,write"), 'b')
		th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
		const statement = "the build passes on main"
		claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"PASS"}]}`).ID
		note := "ran it twice"
		evidence := []protocol.Evidence{{Kind: "reproducer", Ref: "go test ./..."}}
		doc := protocol.StanceDocument("attest", svc.Realm(), claim, statement, bob.actor.Identity, evidence, &note, nil)
		input := jsonOf(map[string]any{"claim": claim, "evidence": json.RawMessage(`[{"kind":"reproducer","ref":"go test ./..."}]`), "note": note,
			"proof": stanceProof(t, signed.NewSigner(bob.priv), doc, time.Now())})
		if _, err := claimOp(svc, bob.actor, "attest", input); err != nil {
			t.Fatal(err)
		}
		// carol's stance is unsigned.
		if _, err := claimOp(svc, agent("carol", "read,write"), "refute", `{"claim":"`+claim+`","evidence":[{"kind":"log","ref":"FAIL"}],"body":"it fails"}`); err != nil {
			t.Fatal(err)
		}
		export := func(format string) []byte {
			var buf bytes.Buffer
			if err := svc.WriteExport(ctx, 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		check := func(name string, data []byte, wantFail int, wantText string) {
			t.Helper()
			r, err := graph.CheckCustody(data)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var all []string
			for _, l := range r.Lines {
				all = append(all, l.What+": "+errText(l.Err))
			}
			if (r.Failed() == 0) != (wantFail == 0) || !strings.Contains(strings.Join(all, "\n"), wantText) {
				t.Errorf("%s: %d fail, want %d naming %q:\n%s", name, r.Failed(), wantFail, wantText, strings.Join(all, "\n"))
			}
		}
		for _, format := range []string{"json", "aif", "graphml"} {
			data := export(format)
			check(format, data, 0, "ok")
			r, _ := graph.CheckCustody(data)
			if len(r.Lines) < 3 {
				t.Errorf("%s: %d proofs checked, want the export's, the binding's and the stance's", format, len(r.Lines))
			}
			check(format+": an edited note", bytes.Replace(data, []byte("ran it twice"), []byte("ran it once!"), 1), 1, "FAIL")
		}
		data := export("json")
		r, _ := graph.CheckCustody(data)
		if r.Unsigned != 1 {
			t.Errorf("%d stances unsigned, want 1 (carol's refutation)", r.Unsigned)
		}
		var exp map[string]any
		if err := json.Unmarshal(data, &exp); err != nil {
			t.Fatal(err)
		}
		mutate := func(f func(exp map[string]any)) []byte {
			var copy map[string]any
			_ = json.Unmarshal(data, &copy)
			f(copy)
			out, _ := json.Marshal(copy)
			return out
		}
		stanceNode := func(exp map[string]any) map[string]any {
			for _, n := range exp["nodes"].([]any) {
				if m := n.(map[string]any); m["document"] != nil {
					return m
				}
			}
			t.Fatal("no signed node")
			return nil
		}
		check("relabelled", mutate(func(e map[string]any) { stanceNode(e)["type"] = "verification" }), 1, "relabelled")
		check("edited note, export proof dropped", mutate(func(e map[string]any) {
			stanceNode(e)["text"] = "ran it once"
			delete(e, "proof")
		}), 1, "it was edited")
		check("stance proof removed", mutate(func(e map[string]any) { delete(stanceNode(e), "document") }), 1, "export proof")
		check("export proof removed", mutate(func(e map[string]any) { delete(e, "proof") }), 1, "it was removed")
		other := signed.NewSigner(newSignerKey('x'))
		forged, _ := other.Sign(mustJSON(t, map[string]string{"type": "ParleyKeyBinding", "realm": svc.Realm(), "identity": "ainotes:bob",
			"key": signed.DIDKey(bob.priv.Public().(ed25519.PublicKey)), "created_at": "2026-12-01T00:00:00Z"}), time.Now())
		check("forged binding", mutate(func(e map[string]any) {
			e["keys"].([]any)[0].(map[string]any)["binding"] = json.RawMessage(forged)
			delete(e, "proof")
		}), 1, "forged")
		check("one key id, two keys", mutate(func(e map[string]any) {
			k := e["keys"].([]any)[0].(map[string]any)
			twin := map[string]any{"id": k["id"], "identity": "ainotes:eve", "did": other.DID(), "binding": k["binding"]}
			e["keys"] = append(e["keys"].([]any), twin)
			delete(e, "proof")
		}), 1, "names two keys")
		check("a key bound to another identity", mutate(func(e map[string]any) {
			e["keys"].([]any)[0].(map[string]any)["identity"] = "ainotes:eve"
			delete(e, "proof")
		}), 1, "binds")
	})
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return "FAIL " + err.Error()
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
