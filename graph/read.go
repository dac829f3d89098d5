package graph

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
)

// Reading an export back, for the signatures it carries: the native JSON graph (also the
// JSON of parley export, which holds it), GraphML and AIF. DOT carries no signatures.

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
	return g.SignedStances(), nil
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
			case "signature":
				n.Signature = new(Signature)
				err = json.Unmarshal([]byte(d.Value), n.Signature)
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
