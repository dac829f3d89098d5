package protocol

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 14, exports carry their evidence of custody: each signed stance as its document with its
// proof (the graph's nodes carry it as document), each key's binding (keys), the realm and its
// key, and a proof of the whole export by the realm key over the export without that proof.
// JSON and AIF are JSON objects, so the proof is their member proof; GraphML ends with a
// comment holding a ParleyExport document whose sha256 covers every byte before it.

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

// custodyKeys are the keys that made the graph's stance proofs, each with its binding, read in
// the export's own snapshot (read), and the realms that signed the imported ones: an imported
// key's binding was checked against its realm's trusted key when it came, so the key that
// signed it is that realm's.
func (s *Service) custodyKeys(ctx context.Context, read *storage.Forum, g *graph.Graph) (*custody, error) {
	seen := map[string]bool{}
	out := &custody{keys: []CustodyKey{}, realms: map[string]string{}}
	for _, n := range g.Nodes {
		if n.Document == nil {
			continue
		}
		var doc struct {
			Proof struct {
				VerificationMethod string `json:"verificationMethod"`
			} `json:"proof"`
		}
		if err := json.Unmarshal(n.Document, &doc); err != nil {
			return nil, err
		}
		pub, err := signed.ParseDIDKey(doc.Proof.VerificationMethod)
		if err != nil {
			return nil, err
		}
		did := signed.DIDKey(pub)
		if seen[did] {
			continue
		}
		seen[did] = true
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

// withCustody adds realm, realm_key, keys, realms (when imported keys need them) and (for AIF, whose nodes do not carry them)
// stance_documents to a JSON export, and signs it with the realm key.
func (s *Service) withCustody(ctx context.Context, g *graph.Graph, c *custody, format string, doc []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return nil, err
	}
	key, err := s.RealmKey(ctx)
	if err != nil {
		return nil, err
	}
	set := func(name string, v any) {
		fields[name], _ = json.Marshal(v)
	}
	set("realm", s.realm)
	set("realm_key", key.DID())
	set("keys", c.keys)
	if len(c.realms) > 0 {
		set("realms", c.realms)
	}
	if format == "aif" {
		docs := map[string]json.RawMessage{}
		for _, n := range g.Nodes {
			if n.Document != nil {
				docs[n.ID] = n.Document
			}
		}
		set("stance_documents", docs)
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	return key.Sign(raw, storage.Now())
}

// GraphMLCustodyPrefix begins the comment that ends a GraphML export.
const GraphMLCustodyPrefix = "<!-- parley-custody "

// writeGraphMLWithCustody writes the GraphML and, after it, one comment line with the
// ParleyExport document {type, format, realm, realm_key, keys, sha256 of every byte before
// the comment} signed by the realm key.
func (s *Service) writeGraphMLWithCustody(ctx context.Context, g *graph.Graph, c *custody, w io.Writer) error {
	var buf bytes.Buffer
	if err := graph.WriteGraphML(&buf, g); err != nil {
		return err
	}
	key, err := s.RealmKey(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	head := map[string]any{
		"type": "ParleyExport", "format": "graphml", "realm": s.realm, "realm_key": key.DID(),
		"keys": c.keys, "sha256": hex.EncodeToString(sum[:]),
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
	buf.WriteString(GraphMLCustodyPrefix + text + " -->\n")
	_, err = w.Write(buf.Bytes())
	return err
}
