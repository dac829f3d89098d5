package protocol_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mr-tron/base58"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A JSON export (json, aif) is written as it is read, so its proof comes last (§ 14, § 19):
// the object's last member is proof, by the realm key, and it holds as any eddsa-jcs-2022
// proof holds — over the document without it, canonicalised — and as a verifier that reads
// the export as a stream checks it (docs/dialectic.md): the bytes before the member proof,
// without the whitespace between tokens and closed with }, are the canonical document, whose
// SHA-256 the proof signs.
func TestExportProofIsLast(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newGoldenForum(t, db)
		key, err := f.svc.RealmKey(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"json", "aif"} {
			for _, thread := range []int64{0, f.generalID} {
				var buf bytes.Buffer
				if err := f.svc.WriteExport(context.Background(), thread, format, &buf); err != nil {
					t.Fatal(err)
				}
				data := buf.Bytes()
				if last := lastMember(t, data); last != "proof" {
					t.Errorf("%s: the last member is %q, not proof", format, last)
				}
				checked, err := signed.Verify(data)
				if err != nil || checked[0].DID != key.DID() {
					t.Errorf("%s: the export's proof as any verifier checks it: %v %+v", format, err, checked)
				}
				if err := checkProofAsAStream(data, key.PublicKey()); err != nil {
					t.Errorf("%s: the export's proof as a stream: %v", format, err)
				}
				r, err := graph.CheckCustody(data)
				if err != nil || r.Failed() != 0 {
					t.Errorf("%s: verify-export's check: %v %+v", format, err, r)
				}
				// A byte changed before the proof breaks it.
				edited := bytes.Replace(data, []byte("ainotes:alice"), []byte("ainotes:alicf"), 1)
				if checkProofAsAStream(edited, key.PublicKey()) == nil {
					t.Errorf("%s: an edited export holds as a stream", format)
				}
			}
		}
	})
}

// lastMember is the name of the last member of the JSON object data.
func lastMember(t *testing.T, data []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v", err)
	}
	last := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		last = tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return last
}

// checkProofAsAStream checks an export's proof as docs/dialectic.md tells a verifier that
// reads the export as a stream: hash the bytes up to the member proof without the whitespace
// between tokens, close them with }, and check the signature over SHA-256(JCS(proof options))
// followed by that hash.
func checkProofAsAStream(data []byte, pub ed25519.PublicKey) error {
	at := bytes.LastIndex(data, []byte(`"proof":`))
	if at < 0 {
		return errString("no proof")
	}
	before := bytes.TrimRight(data[:at], " \n")
	before = bytes.TrimSuffix(before, []byte(","))
	var compact bytes.Buffer
	if err := json.Compact(&compact, append(append([]byte{}, before...), '}')); err != nil {
		return err
	}
	docHash := sha256.Sum256(compact.Bytes())
	var rest struct {
		Proof map[string]any `json:"proof"`
	}
	if err := json.Unmarshal(append([]byte("{"), data[at:]...), &rest); err != nil {
		return err
	}
	value, _ := rest.Proof["proofValue"].(string)
	delete(rest.Proof, "proofValue")
	opts, err := json.Marshal(rest.Proof)
	if err != nil {
		return err
	}
	canonOpts, err := signed.Canonical(opts)
	if err != nil {
		return err
	}
	optsHash := sha256.Sum256(canonOpts)
	sig, err := base58.Decode(strings.TrimPrefix(value, "z"))
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, append(optsHash[:], docHash[:]...), sig) {
		return errString("the signature does not hold over the bytes before the proof")
	}
	return nil
}

type errString string

func (e errString) Error() string { return string(e) }

// A token scoped to a room exports that room only, in every format (§ 16): none of another
// room's threads, claims, stances, messages or keys, and the scoped room's claim in full.
func TestEveryExportFormatKeepsToTheScope(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newGoldenForum(t, db)
		ctx := context.Background()
		researcher := agent("researcher", "read")
		researcher.Rooms = []int64{2}
		for _, format := range []string{"json", "graphml", "dot", "aif", "jsonl"} {
			stream, err := f.svc.OpenExport(ctx, researcher, "", []byte(`{"format":"`+format+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := stream.Stream(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			for _, outside := range []string{`"` + f.datasetForum.general + `"`, `"` + f.claim + `"`, "the build passes on main", "the port is 808", "Does the build pass?", "ainotes:carol", "ainotes:vera", "key_1"} {
				if strings.Contains(out, outside) {
					t.Errorf("%s: the scoped export holds %q of another room", format, outside)
				}
			}
			if !strings.Contains(out, "research finds more") || !strings.Contains(out, f.researchClaim) {
				t.Errorf("%s: the scoped export lacks the research room's claims", format)
			}
			if format != "dot" && format != "jsonl" {
				if r, err := graph.CheckCustody(buf.Bytes()); err != nil || r.Failed() != 0 {
					t.Errorf("%s: the scoped export's custody: %v %+v", format, err, r)
				}
			}
		}
	})
}
