package graph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/parleyforum/parley/signed"
)

// Checking an export's custody offline (PROTOCOL.md § 14): the export's own proof by the
// realm key, each key's binding (by the realm key of the realm it names), each signed
// stance's document with its proof (by a key bound to the stance's author, and saying what
// the export's node says), and the version 1 signatures. A JSON document that is no Parley
// export but carries an eddsa-jcs-2022 proof is checked as such.
//
// A json or aif export is written as a stream and signed at its end, so its proof is its last
// member; it is an eddsa-jcs-2022 proof of the export without it all the same (the canonical
// form has no order of members to keep), and is checked as any other. A GraphML export's
// proof is its last line, over the SHA-256 of every byte before it.

// CheckLine is one proof checked: what it is, and nil or why it fails.
type CheckLine struct {
	What string
	Err  error
	// custody is set on the proofs a realm key makes (the export's and the bindings'): who
	// made it and for which realm, for Expect.
	custody *custodyProof
}

// CustodyReport is every proof of a file checked, and the stances that carry none.
type CustodyReport struct {
	Lines    []CheckLine
	Unsigned int
	// Realm and RealmKey are the realm and realm key the export names, and Signer the key
	// that made its own proof when that proof holds ("" otherwise, and for a file without one).
	Realm, RealmKey, Signer string
	// GraphRead is set for a graph read (GET /v1/graph, the graph page's downloads): no
	// export proof, no realm key, no keys — nothing of custody to check, only the stance
	// documents' own proofs.
	GraphRead bool
}

// Failed counts the proofs that do not hold.
func (r *CustodyReport) Failed() int {
	n := 0
	for _, l := range r.Lines {
		if l.Err != nil {
			n++
		}
	}
	return n
}

func (r *CustodyReport) add(what string, err error) {
	r.Lines = append(r.Lines, CheckLine{What: what, Err: err})
}

// addCustody adds the line of a proof made by a realm key: signer made it (empty when the
// proof does not hold), for realm.
func (r *CustodyReport) addCustody(what string, err error, signer, realm string) {
	r.Lines = append(r.Lines, CheckLine{What: what, Err: err, custody: &custodyProof{signer: signer, realm: realm}})
}

// custodyKey is a key as the export lists it.
type custodyKey struct {
	ID       string          `json:"id"`
	Identity string          `json:"identity"`
	DID      string          `json:"did"`
	Binding  json.RawMessage `json:"binding"`
}

// custody is what an export says of its realm, keys and foreign realms.
type custody struct {
	Realm    string            `json:"realm"`
	RealmKey string            `json:"realm_key"`
	Keys     []custodyKey      `json:"keys"`
	Realms   map[string]string `json:"realms"`
}

// CheckCustody checks every proof of data: a Parley export in JSON, AIF or GraphML, or any
// JSON document with an eddsa-jcs-2022 proof.
func CheckCustody(data []byte) (*CustodyReport, error) {
	trimmed := bytes.TrimSpace(data)
	r := &CustodyReport{}
	if bytes.HasPrefix(trimmed, []byte("<")) {
		return r, r.checkGraphML(data)
	}
	if bytes.HasPrefix(trimmed, []byte("digraph")) {
		return nil, errors.New("a DOT export carries no proofs: export json, graphml or aif")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return nil, errors.New("not a Parley export (JSON, AIF or GraphML) nor a JSON document")
	}
	_, isGraph := top["nodes"]
	if !isGraph {
		// Any Data Integrity document: its proof alone.
		checked, err := signed.Verify(trimmed)
		what, signer := "document proof", ""
		if err == nil {
			what = fmt.Sprintf("document proof by %s (created %s)", checked[0].VerificationMethod, checked[0].Created)
			signer, r.Signer = checked[0].DID, checked[0].DID
		}
		r.addExportProof(what, err, signer, "")
		return r, nil
	}
	var c custody
	_ = json.Unmarshal(trimmed, &c)
	if _, has := top["proof"]; has {
		checked, err := signed.Verify(trimmed)
		r.Realm, r.RealmKey = c.Realm, c.RealmKey
		signer := ""
		if err == nil {
			signer, r.Signer = checked[0].DID, checked[0].DID
			if signer != c.RealmKey {
				err = fmt.Errorf("made by %s, not by the realm key %s the export names", signer, c.RealmKey)
			}
		}
		r.addExportProof(fmt.Sprintf("export proof of realm %s by %s", c.Realm, c.RealmKey), err, signer, c.Realm)
	} else if c.RealmKey != "" || len(c.Keys) > 0 || c.Realm != "" {
		r.Realm, r.RealmKey = c.Realm, c.RealmKey
		r.addExportProof("export proof", errors.New("the export names a realm key but carries no proof: it was removed"), "", c.Realm)
	} else {
		r.GraphRead = true
	}
	bound := r.checkBindings(&c)
	var nodes []*Node
	if _, aif := top["locutions"]; aif {
		var docs map[string]json.RawMessage
		_ = json.Unmarshal(top["stance_documents"], &docs)
		for id, d := range docs {
			nodes = append(nodes, &Node{ID: id, Document: d})
		}
	} else {
		var g Graph
		if err := json.Unmarshal(trimmed, &g); err != nil {
			return nil, fmt.Errorf("the JSON graph cannot be read: %v", err)
		}
		nodes = g.Nodes
		r.checkStances(&g, bound)
		nodes = nil
	}
	for _, n := range nodes {
		r.checkDocument(n, nil, bound)
	}
	legacy, err := ReadSignedStances(data)
	if err == nil {
		for _, st := range legacy {
			r.add(fmt.Sprintf("legacy_signature of %s by %s on %s, %s", st.Stance, st.By, st.Claim, st.Signature.Key), st.Check())
		}
	}
	return r, nil
}

// checkGraphML checks a GraphML export: the custody comment at its end over every byte before
// it, the bindings it lists and the documents of the nodes.
func (r *CustodyReport) checkGraphML(data []byte) error {
	at := bytes.LastIndex(data, []byte("<!-- parley-custody "))
	var c custody
	if at < 0 {
		// The graph read's GraphML (GET /v1/graph?format=graphml, the graph page's download):
		// no custody; an export's always ends with the comment.
		r.GraphRead = true
	} else {
		text := strings.TrimSuffix(strings.TrimSpace(string(data[at+len("<!-- parley-custody "):])), "-->")
		doc := []byte(strings.TrimSpace(text))
		var head struct {
			SHA256 string `json:"sha256"`
		}
		_ = json.Unmarshal(doc, &c)
		_ = json.Unmarshal(doc, &head)
		checked, err := signed.Verify(doc)
		sum := sha256.Sum256(data[:at])
		r.Realm, r.RealmKey = c.Realm, c.RealmKey
		signer := ""
		if err == nil {
			signer, r.Signer = checked[0].DID, checked[0].DID
		}
		switch {
		case err != nil:
		case signer != c.RealmKey:
			err = fmt.Errorf("made by %s, not by the realm key %s the export names", signer, c.RealmKey)
		case head.SHA256 != hex.EncodeToString(sum[:]):
			err = errors.New("the GraphML before the custody comment is not the one its proof covers: it was changed")
		}
		r.addExportProof(fmt.Sprintf("export proof of realm %s by %s", c.Realm, c.RealmKey), err, signer, c.Realm)
	}
	bound := r.checkBindings(&c)
	g, err := readGraphML(data)
	if err != nil {
		return err
	}
	r.checkStances(g, bound)
	for _, st := range g.SignedStances() {
		r.add(fmt.Sprintf("legacy_signature of %s by %s on %s, %s", st.Stance, st.By, st.Claim, st.Signature.Key), st.Check())
	}
	return nil
}

// checkBindings checks each key's binding and answers the keys that hold, did → identity.
// One key id with two keys, or one key bound to two identities, fails.
func (r *CustodyReport) checkBindings(c *custody) map[string]string {
	bound := map[string]string{}
	ids := map[string]string{}
	for _, k := range c.Keys {
		what := fmt.Sprintf("binding of %s (%s) to %s", k.ID, k.DID, k.Identity)
		var signer, realm string
		err := func() error {
			if other, seen := ids[k.ID]; seen && other != k.DID {
				return fmt.Errorf("the key id %s names two keys, %s and %s", k.ID, other, k.DID)
			}
			ids[k.ID] = k.DID
			checked, err := signed.Verify(k.Binding)
			if err != nil {
				return err
			}
			var b struct {
				Type     string `json:"type"`
				Realm    string `json:"realm"`
				Identity string `json:"identity"`
				Key      string `json:"key"`
			}
			_ = json.Unmarshal(k.Binding, &b)
			signer, realm = checked[0].DID, b.Realm
			want := c.RealmKey
			if b.Realm != c.Realm {
				if want = c.Realms[b.Realm]; want == "" {
					return fmt.Errorf("the binding names realm %q, whose key the export does not list", b.Realm)
				}
			}
			switch {
			case b.Type != "ParleyKeyBinding":
				return errors.New("the binding is not a ParleyKeyBinding")
			case checked[0].DID != want:
				return fmt.Errorf("the binding is signed by %s, not by the key of realm %s (%s): it is forged", checked[0].DID, b.Realm, want)
			case b.Key != k.DID || b.Identity != k.Identity:
				return fmt.Errorf("the binding binds %s to %s, not %s to %s", b.Key, b.Identity, k.DID, k.Identity)
			}
			if other, seen := bound[k.DID]; seen && other != k.Identity {
				return fmt.Errorf("the key %s is bound to two identities, %s and %s", k.DID, other, k.Identity)
			}
			return nil
		}()
		if err == nil {
			bound[k.DID] = k.Identity
		}
		r.addCustody(what, err, signer, realm)
	}
	return bound
}

// stanceKinds maps a node type to the stance its document names.
var stanceKinds = map[string]string{TypeAttestation: "attest", TypeRefutation: "refute", TypeVerification: "verify"}

// checkStances checks the document of every stance node of g against the node, and counts
// the stances that carry no proof at all.
func (r *CustodyReport) checkStances(g *Graph, bound map[string]string) {
	for _, n := range g.Nodes {
		if _, stance := stanceKinds[n.Type]; !stance {
			if n.Document != nil {
				r.add("document of "+n.ID, fmt.Errorf("a %s carries a stance document", n.Type))
			}
			continue
		}
		if n.Document == nil {
			if n.Signature == nil {
				r.Unsigned++
			}
			continue
		}
		r.checkDocument(n, g, bound)
	}
}

// stanceDocument is the § 14 document of a signed stance.
type stanceDocument struct {
	Type     string     `json:"type"`
	Stance   string     `json:"stance"`
	Realm    string     `json:"realm"`
	Claim    string     `json:"claim"`
	By       string     `json:"by"`
	Evidence []Evidence `json:"evidence"`
	Note     *string    `json:"note"`
	Body     *string    `json:"body"`
}

// checkDocument checks one stance's document: its proof, the binding of its key to its
// author, and (when g is given) that it says what its node says.
func (r *CustodyReport) checkDocument(n *Node, g *Graph, bound map[string]string) {
	var d stanceDocument
	_ = json.Unmarshal(n.Document, &d)
	what := fmt.Sprintf("stance %s: %s by %s on %s", n.ID, d.Stance, d.By, d.Claim)
	checked, err := signed.Verify(n.Document)
	if err == nil {
		if r.GraphRead {
			what += fmt.Sprintf(", by the key %s, whose binding a graph read does not carry", checked[0].DID)
		}
		err = func() error {
			if d.Type != "ParleyStance" {
				return errors.New("the document is not a ParleyStance")
			}
			// A graph read carries no bindings: there the document alone is checked.
			if holder, ok := bound[checked[0].DID]; !r.GraphRead && !ok {
				return fmt.Errorf("its key %s has no binding in the export that holds", checked[0].DID)
			} else if !r.GraphRead && holder != d.By {
				return fmt.Errorf("its key %s is bound to %s, not to its author %s", checked[0].DID, holder, d.By)
			}
			if g == nil {
				return nil
			}
			return matchesDocument(n, &d)
		}()
	}
	r.add(what, err)
}

// matchesDocument: the node says what the signed document says — the kind of stance, the author,
// the note or body, the evidence.
func matchesDocument(n *Node, d *stanceDocument) error {
	text := ""
	if d.Body != nil {
		text = *d.Body
	} else if d.Note != nil {
		text = *d.Note
	}
	evidence := n.Evidence
	if evidence == nil {
		evidence = []Evidence{}
	}
	signedEvidence := d.Evidence
	if signedEvidence == nil {
		signedEvidence = []Evidence{}
	}
	switch {
	case stanceKinds[n.Type] != d.Stance:
		return fmt.Errorf("the export shows a %s, but the signed stance is %s: it was relabelled", n.Type, d.Stance)
	case n.By != d.By:
		return fmt.Errorf("the export names %s as its author, the signed stance %s", n.By, d.By)
	case n.Text != text:
		return errors.New("the export's note or body is not the signed one: it was edited")
	case !reflect.DeepEqual(evidence, signedEvidence):
		return errors.New("the export's evidence is not the signed evidence: it was edited")
	}
	return nil
}
