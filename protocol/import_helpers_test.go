package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// realmForum is one forum of the tests that carry claims between realms: its name, database,
// service and realm key.
type realmForum struct {
	name string
	db   *storage.DB
	svc  *protocol.Service
	did  string
}

// openRealm is a new forum of realm name on a fresh database of kind, with limits, trusting
// the realms of trust (name → did).
func openRealm(t *testing.T, kind storage.Kind, name string, limits protocol.Limits, trust map[string]string) *realmForum {
	t.Helper()
	r := &realmForum{name: name, db: storagetest.Open(t, kind)}
	r.svc = protocol.New(r.db, protocol.Options{Realm: name, Limits: limits, TrustRealms: trust})
	key, err := r.svc.RealmKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.did = key.DID()
	return r
}

// agent is an agent of the realm with rights (read and write always).
func (r *realmForum) agent(handle string, rights ...protocol.Right) *protocol.Actor {
	return realmAgent(r.name, handle, rights...)
}

// export is the realm's export in format (json or jsonl) of thread (0: everything).
func (r *realmForum) export(t *testing.T, format string, thread int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := r.svc.WriteExport(context.Background(), thread, format, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// record is everything the realm holds, as its dataset says it, without the export line
// (which holds its time): two records are equal when nothing was written in between.
func (r *realmForum) record(t *testing.T) string {
	t.Helper()
	data := bytes.TrimSuffix(r.export(t, protocol.FormatJSONL, 0), []byte("\n"))
	return string(data[:bytes.LastIndexByte(data, '\n')+1])
}

// importInto imports data into the realm as its operator.
func (r *realmForum) importInto(data []byte) (*protocol.ImportResult, error) {
	return r.svc.ImportExport(context.Background(), protocol.OperatorActor(), data, 0)
}

// forge is what the operator of realm r can make of its JSON export: edited, then signed
// again by r's realm key, so that its custody holds.
func forge(t *testing.T, r *realmForum, export []byte, edit func(top map[string]any)) []byte {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal(export, &top); err != nil {
		t.Fatal(err)
	}
	delete(top, "proof")
	edit(top)
	raw, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	key, err := protocol.LoadRealmKey(context.Background(), r.db)
	if err != nil {
		t.Fatal(err)
	}
	out, err := key.Sign(raw, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exportedClaim is the claim of a JSON export's claims with the id.
func exportedClaim(t *testing.T, top map[string]any, id string) map[string]any {
	t.Helper()
	for _, c := range top["claims"].([]any) {
		if claim := c.(map[string]any); claim["id"] == id {
			return claim
		}
	}
	t.Fatalf("the export has no claim %s", id)
	return nil
}

// addTo appends item to the list under name of a JSON object.
func addTo(object map[string]any, name string, item any) {
	list, _ := object[name].([]any)
	object[name] = append(list, item)
}

// signStance takes the stance op (attest, refute or verify) on claim as s, signed by s's key:
// the document of § 14, which on an imported claim names its origin too. fields are the
// operation's other fields (evidence, note, body, provenance).
func signStance(t *testing.T, r *realmForum, s *signer, op string, claim *protocol.ClaimView, fields map[string]any) *protocol.ClaimView {
	t.Helper()
	doc := stanceDocumentFor(t, r.name, s.actor.Identity, op, claim, fields)
	fields["claim"] = claim.ID
	fields["proof"] = stanceProof(t, signed.NewSigner(s.priv), doc, time.Now())
	return mustClaim(t, r.svc, s.actor, op, jsonOf(fields))
}

// stanceDocumentFor is the document a stance with fields on claim signs.
func stanceDocumentFor(t *testing.T, realm, by, op string, claim *protocol.ClaimView, fields map[string]any) map[string]any {
	t.Helper()
	var evidence []protocol.Evidence
	if raw, ok := fields["evidence"]; ok {
		remarshalTo(t, raw, &evidence)
	}
	text := func(name string) *string {
		if v, ok := fields[name].(string); ok {
			return &v
		}
		return nil
	}
	doc := protocol.StanceDocument(op, realm, claim.ID, claim.Statement, by, evidence, text("note"), text("body"))
	if claim.Origin != nil {
		doc["origin"] = map[string]string{"realm": claim.Origin.Realm, "claim": claim.Origin.Claim}
	}
	return doc
}

func remarshalTo(t *testing.T, from, to any) {
	t.Helper()
	raw, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(raw, to)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// claimJSON is a claim as a JSON object, with whatever a ClaimView leaves out (origin's
// imported_at, evidence's present).
func claimJSON(t *testing.T, r *realmForum, id string) map[string]any {
	t.Helper()
	res, err := r.svc.ReadClaim(context.Background(), reader, []byte(`{"claim":"`+id+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	remarshalTo(t, res.Claim, &out)
	return out
}

// setTimes moves what the realm's database says of a claim: its created_at and valid_until
// (nil: none), and the at of each of its stances — as if the claim had been made then.
func setTimes(t *testing.T, r *realmForum, claim string, created time.Time, validUntil *time.Time, stances time.Time) {
	t.Helper()
	id, ok := protocol.ParseIDString(claim, "cl_")
	if !ok {
		t.Fatalf("%s is no claim id", claim)
	}
	ctx := context.Background()
	if _, err := r.db.ExecContext(ctx, "UPDATE claims SET created_at = ?, valid_until = ? WHERE id = ?", created, validUntil, id); err != nil {
		t.Fatal(err)
	}
	if _, err := r.db.ExecContext(ctx, "UPDATE claim_stances SET created_at = ? WHERE claim_id = ?", stances, id); err != nil {
		t.Fatal(err)
	}
}
