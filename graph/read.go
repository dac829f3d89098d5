package graph

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
)

// Reading an export back, for the signatures it carries: the native JSON graph (also the
// JSON of parley export, which holds it and the claims beside it), GraphML and AIF. DOT
// carries no signatures.

// ReadSignedStances lists the signatures of an export in any format that carries them.
func ReadSignedStances(data []byte) ([]*SignedStance, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(trimmed, []byte("<")):
		g, err := readGraphML(trimmed)
		if err != nil {
			return nil, err
		}
		return g.SignedStances(), nil
	case bytes.HasPrefix(trimmed, []byte("digraph")):
		return nil, errors.New("a DOT export carries no signatures: export json, graphml or aif")
	}
	var doc struct {
		Nodes     json.RawMessage `json:"nodes"`
		Edges     json.RawMessage `json:"edges"`
		Locutions json.RawMessage `json:"locutions"`
		Claims    []exportClaim   `json:"claims"`
	}
	if err := json.Unmarshal(trimmed, &doc); err != nil || doc.Nodes == nil {
		return nil, errors.New("not a Parley export: neither a JSON graph or export, nor GraphML, nor AIF")
	}
	if doc.Locutions != nil {
		var aif AIF
		if err := json.Unmarshal(trimmed, &aif); err != nil {
			return nil, fmt.Errorf("the AIF document cannot be read: %v", err)
		}
		return aif.SignedStances(), nil
	}
	var g Graph
	if err := json.Unmarshal(trimmed, &g); err != nil {
		return nil, fmt.Errorf("the JSON graph cannot be read: %v", err)
	}
	return withClaims(g.SignedStances(), doc.Claims), nil
}

// exportClaim is a claim as parley export's JSON holds it beside the graph (as claim_read
// returns it), with the fields a signature's check needs.
type exportClaim struct {
	ID            string         `json:"id"`
	Statement     string         `json:"statement"`
	Attestations  []exportStance `json:"attestations"`
	Verifications []exportStance `json:"verifications"`
}

type exportStance struct {
	ID string `json:"id"`
	By struct {
		Identity string `json:"identity"`
	} `json:"by"`
	Evidence  []Evidence `json:"evidence"`
	Signature *Signature `json:"signature"`
}

// withClaims checks the signatures of the export's claims too: a signature they hold and the
// graph does not is added to those checked, and one on which they and the graph disagree
// fails, so that neither part of the export can be altered alone.
func withClaims(stances []*SignedStance, claims []exportClaim) []*SignedStance {
	byID := map[string]*SignedStance{}
	for _, s := range stances {
		byID[s.Stance] = s
	}
	for _, c := range claims {
		for _, st := range append(append([]exportStance{}, c.Attestations...), c.Verifications...) {
			if st.Signature == nil {
				continue
			}
			s := &SignedStance{Stance: st.ID, Claim: c.ID, Statement: c.Statement, By: st.By.Identity,
				Evidence: st.Evidence, Signature: *st.Signature}
			if s.Evidence == nil {
				s.Evidence = []Evidence{}
			}
			seen, ok := byID[st.ID]
			if !ok {
				stances = append(stances, s)
				continue
			}
			if seen.fault == nil && !sameStance(seen, s) {
				seen.fault = fmt.Errorf("the export's claims and its graph differ on %s", st.ID)
			}
		}
	}
	return stances
}

// sameStance reports whether two readings of one signed stance say the same.
func sameStance(a, b *SignedStance) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb) && a.Statement == b.Statement
}

// SignedStances are the AIF document's signatures, each with the text of its claim's I-node
// as the statement.
func (doc *AIF) SignedStances() []*SignedStance {
	statements := map[string]string{}
	for _, n := range doc.Nodes {
		if n.Type == "I" {
			statements[n.NodeID] = n.Text
		}
	}
	for _, s := range doc.Signatures {
		statement, ok := statements[s.Claim]
		if !ok {
			s.fault = errors.New("the claim it supports or verifies is not an I-node of the document")
		}
		s.Statement = statement
		if s.Evidence == nil {
			s.Evidence = []Evidence{}
		}
	}
	return doc.Signatures
}

// readGraphML reads the nodes and edges of a GraphML document written by WriteGraphML, with
// the attributes a signature's check needs.
func readGraphML(data []byte) (*Graph, error) {
	var doc xmlGraphML
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the GraphML document cannot be read: %v", err)
	}
	names := map[string]string{}
	for _, k := range doc.Keys {
		names[k.ID] = k.Name
	}
	g := &Graph{}
	for _, xn := range doc.Graph.Nodes {
		n := &Node{ID: xn.ID}
		for _, d := range xn.Data {
			var err error
			switch names[d.Key] {
			case "type":
				n.Type = d.Value
			case "statement":
				n.Statement = d.Value
			case "identity":
				n.By = d.Value
			case "evidence":
				err = json.Unmarshal([]byte(d.Value), &n.Evidence)
			case "legacy_signature":
				n.Signature = new(Signature)
				err = json.Unmarshal([]byte(d.Value), n.Signature)
			case "document":
				n.Document = json.RawMessage(d.Value)
			case "text":
				n.Text = d.Value
			}
			if err != nil {
				return nil, fmt.Errorf("node %s: its %s cannot be read: %v", n.ID, names[d.Key], err)
			}
		}
		g.Nodes = append(g.Nodes, n)
	}
	for _, xe := range doc.Graph.Edges {
		e := &Edge{From: xe.Source, To: xe.Target}
		for _, d := range xe.Data {
			if names[d.Key] == "kind" {
				e.Kind = d.Value
			}
		}
		g.Edges = append(g.Edges, e)
	}
	return g, nil
}
