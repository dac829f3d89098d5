package protocol

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/jsonstream"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 14, exports carry their evidence of custody: each signed stance as its document with its
// proof (the graph's nodes carry it as document), each key's binding (keys), the realm and its
// key, and a proof of the whole export by the realm key over the export without that proof.
// JSON and AIF are JSON objects written in canonical (JCS) order as they stream: their proof
// is their last member, made over the digest of every member before it — the bytes before
// it, without the whitespace between tokens, closed, are the JCS form of the document
// without proof, which any eddsa-jcs-2022 verifier hashes. GraphML ends with a comment
// holding a ParleyExport document whose sha256 covers every byte before it.

// CustodyKey is a key as an export lists it: id, identity, did and binding.
type CustodyKey struct {
	ID       string          `json:"id"`
	Identity string          `json:"identity"`
	DID      string          `json:"did"`
	Binding  json.RawMessage `json:"binding"`
}

// custody is what an export says of its keys: each key that made one of its stance proofs,
// with its binding, and the other realms whose keys signed bindings of imported keys.
type custody struct {
	keys   []CustodyKey
	realms map[string]string
}

// custodyNotes gathers, as an export passes its stances, the keys that made their proofs:
// one did each, however many stances a key signed.
type custodyNotes struct {
	seen map[string]bool
	dids []string
}

// noteNode notes the key of a stance node's document (nil and other nodes are passed by).
func (c *custodyNotes) noteNode(n *graph.Node) error {
	if n == nil {
		return nil
	}
	return c.noteDocument(n.Document)
}

// noteDocument notes the key that made a stance document's proof.
func (c *custodyNotes) noteDocument(document json.RawMessage) error {
	if document == nil {
		return nil
	}
	var doc struct {
		Proof struct {
			VerificationMethod string `json:"verificationMethod"`
		} `json:"proof"`
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		return err
	}
	pub, err := signed.ParseDIDKey(doc.Proof.VerificationMethod)
	if err != nil {
		return err
	}
	did := signed.DIDKey(pub)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if !c.seen[did] {
		c.seen[did] = true
		c.dids = append(c.dids, did)
	}
	return nil
}

// custodyOf are the noted keys, each with its binding, read in the export's own snapshot
// (read), by id; and the realms that signed the imported ones: an imported key's binding was
// checked against its realm's trusted key when it came, so the key that signed it is that
// realm's.
func (s *Service) custodyOf(ctx context.Context, read *storage.Forum, notes *custodyNotes) (*custody, error) {
	out := &custody{keys: []CustodyKey{}, realms: map[string]string{}}
	for _, did := range notes.dids {
		k, err := read.KeyByDID(ctx, did)
		if errors.Is(err, storage.ErrNotFound) {
			continue // checked when the stance was written; verify-export names it unbound
		}
		if err != nil {
			return nil, fault(err)
		}
		binding, err := s.binding(ctx, k)
		if err != nil {
			return nil, err
		}
		if k.Binding != nil {
			s.noteForeignRealm(out.realms, binding)
		}
		out.keys = append(out.keys, CustodyKey{ID: KeyKey(k.ID), Identity: k.Identity, DID: did, Binding: binding})
	}
	sort.Slice(out.keys, func(i, j int) bool { return out.keys[i].ID < out.keys[j].ID })
	return out, nil
}

// noteForeignRealm adds to realms the realm and key that signed binding, when it is another
// realm's: an imported key's binding was checked against its realm's trusted key when it came,
// so the key that signed it is that realm's, and an export lists it for the binding to be
// checked offline.
func (s *Service) noteForeignRealm(realms map[string]string, binding json.RawMessage) {
	var b struct {
		Realm string `json:"realm"`
	}
	checked, err := signed.Verify(binding)
	if err == nil && json.Unmarshal(binding, &b) == nil && b.Realm != s.realm {
		realms[b.Realm] = checked[0].DID
	}
}

// putCustody writes the members keys, realm, realm_key and (when imported keys need them)
// realms of a JSON export in canonical order, with what comes between them: keys first, then
// between(realm) — the members whose names sort between keys and realm — then the realm's.
func (s *Service) putCustody(jw *jsonstream.Writer, c *custody, key *signed.Signer, between func() error) error {
	if err := jw.Put("keys", c.keys); err != nil {
		return err
	}
	if err := between(); err != nil {
		return err
	}
	if err := jw.Put("realm", s.realm); err != nil {
		return err
	}
	if err := jw.Put("realm_key", key.DID()); err != nil {
		return err
	}
	if len(c.realms) > 0 {
		return jw.Put("realms", c.realms)
	}
	return nil
}

// signStream ends a canonical JSON export: its proof by the realm key over every member
// before it (the digest of the document written so far), as its last member.
func signStream(jw *jsonstream.Writer, key *signed.Signer) error {
	digest, err := jw.Digest()
	if err != nil {
		return err
	}
	proof, err := key.ProveDigest(digest, storage.Now())
	if err != nil {
		return err
	}
	if err := jw.Trailer("proof", proof); err != nil {
		return err
	}
	return jw.Close()
}

// writeAIFExport writes the AIF export: the AIF document in canonical (JCS) order, indented,
// with the custody members — keys, realm, realm_key, realms, and stance_documents (AIF's
// nodes do not carry them), node id → document — and its proof last.
func (s *Service) writeAIFExport(ctx context.Context, read *storage.Forum, src graph.Source, threadID int64, key *signed.Signer, w io.Writer) error {
	jw := jsonstream.New(w, jsonstream.Options{Canonical: true, Indent: "  "})
	notes := &custodyNotes{}
	a := graph.NewAIFMembers(notingSource{Source: src, note: notes.noteNode})
	// edges passes every stance: the keys are known after it.
	if err := jw.Array("edges", false, a.Edges); err != nil {
		return err
	}
	c, err := s.custodyOf(ctx, read, notes)
	if err != nil {
		return err
	}
	err = s.putCustody(jw, c, key, func() error {
		for _, m := range []struct {
			name string
			each func(func(any) error) error
		}{{"locutions", a.Locutions}, {"nodes", a.Nodes}, {"participants", a.Participants}} {
			if err := jw.Array(m.name, false, m.each); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := jw.Array("signatures", true, a.Signatures); err != nil {
		return err
	}
	if err := jw.BeginObject("stance_documents"); err != nil {
		return err
	}
	var last *storage.StanceDocument
	for {
		page, err := read.StanceDocumentsAfter(ctx, storage.DatasetPage{Thread: threadID, Limit: datasetPage}, last)
		if err != nil {
			return err
		}
		for i := range page {
			if err := jw.PutRaw(StanceKey(page[i].Kind, page[i].ID), json.RawMessage(page[i].Proof)); err != nil {
				return err
			}
		}
		if len(page) < datasetPage {
			break
		}
		last = &page[len(page)-1]
	}
	if err := jw.End(); err != nil {
		return err
	}
	return signStream(jw, key)
}

// GraphMLCustodyPrefix begins the comment that ends a GraphML export.
const GraphMLCustodyPrefix = "<!-- parley-custody "

// writeGraphMLExport writes the GraphML and, after it, one comment line with the
// ParleyExport document {type, format, realm, realm_key, keys, sha256 of every byte before
// the comment} signed by the realm key.
func (s *Service) writeGraphMLExport(ctx context.Context, read *storage.Forum, src graph.Source, key *signed.Signer, w io.Writer) error {
	sum := sha256.New()
	notes := &custodyNotes{}
	if err := graph.WriteGraphML(io.MultiWriter(w, sum), notingSource{Source: src, note: notes.noteNode}); err != nil {
		return err
	}
	c, err := s.custodyOf(ctx, read, notes)
	if err != nil {
		return err
	}
	head := map[string]any{
		"type": "ParleyExport", "format": "graphml", "realm": s.realm, "realm_key": key.DID(),
		"keys": c.keys, "sha256": hex.EncodeToString(sum.Sum(nil)),
	}
	if len(c.realms) > 0 {
		head["realms"] = c.realms
	}
	doc, err := json.Marshal(head)
	if err != nil {
		return err
	}
	signedDoc, err := key.Sign(doc, storage.Now())
	if err != nil {
		return err
	}
	// An XML comment may not hold "--": JSON may write the second - as \u002d.
	text := strings.ReplaceAll(string(signedDoc), "--", `-\u002d`)
	_, err = io.WriteString(w, GraphMLCustodyPrefix+text+" -->\n")
	return err
}
