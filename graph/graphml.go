package graph

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"strconv"
	"time"
)

// GraphML (graphml.graphdrawing.org): every node and edge attribute declared once as a typed
// <key>, so that tools (Gephi, yEd, NetworkX, igraph, graphology) read them with their types.

// graphmlKey is one attribute: its id, what it belongs to, its name and type, and how a
// node's value is found ("" leaves it out for that node).
type graphmlKey struct {
	id, domain, name, typ string
	node                  func(*Node) string
}

var graphmlKeys = []graphmlKey{
	{"n_type", "node", "type", "string", func(n *Node) string { return n.Type }},
	{"n_thread", "node", "thread", "string", func(n *Node) string { return n.Thread }},
	{"n_statement", "node", "statement", "string", func(n *Node) string { return n.Statement }},
	{"n_state", "node", "state", "string", func(n *Node) string { return n.State }},
	{"n_certainty", "node", "certainty", "string", func(n *Node) string { return n.Certainty }},
	{"n_expired", "node", "expired", "boolean", func(n *Node) string {
		if n.Expired == nil {
			return ""
		}
		return strconv.FormatBool(*n.Expired)
	}},
	{"n_grounded", "node", "grounded", "string", func(n *Node) string { return string(n.Grounded) }},
	{"n_identity", "node", "identity", "string", func(n *Node) string {
		if n.AssertedBy != "" {
			return n.AssertedBy
		}
		return n.By
	}},
	{"n_kind", "node", "kind", "string", func(n *Node) string { return n.Kind }},
	{"n_text", "node", "text", "string", func(n *Node) string { return n.Text }},
	{"n_evidence", "node", "evidence", "string", func(n *Node) string {
		if len(n.Evidence) == 0 {
			return ""
		}
		b, _ := json.Marshal(n.Evidence)
		return string(b)
	}},
	{"n_time", "node", "time", "string", func(n *Node) string { return n.At.UTC().Format(time.RFC3339Nano) }},
	{"n_signature", "node", "legacy_signature", "string", func(n *Node) string {
		if n.Signature == nil {
			return ""
		}
		b, _ := json.Marshal(n.Signature)
		return string(b)
	}},
	{"n_document", "node", "document", "string", func(n *Node) string { return string(n.Document) }},
	{"n_model", "node", "provenance_model", "string", (*Node).ProvenanceModel},
	{"n_client", "node", "provenance_client", "string", (*Node).ProvenanceClient},
	{"e_kind", "edge", "kind", "string", nil},
}

type xmlData struct {
	Key   string `xml:"key,attr"`
	Value string `xml:",chardata"`
}

type xmlKey struct {
	ID   string `xml:"id,attr"`
	For  string `xml:"for,attr"`
	Name string `xml:"attr.name,attr"`
	Type string `xml:"attr.type,attr"`
}

type xmlNode struct {
	ID   string    `xml:"id,attr"`
	Data []xmlData `xml:"data"`
}

type xmlEdge struct {
	ID     string    `xml:"id,attr"`
	Source string    `xml:"source,attr"`
	Target string    `xml:"target,attr"`
	Data   []xmlData `xml:"data"`
}

type xmlGraphML struct {
	XMLName xml.Name `xml:"graphml"`
	NS      string   `xml:"xmlns,attr"`
	Keys    []xmlKey `xml:"key"`
	Graph   struct {
		ID          string    `xml:"id,attr"`
		EdgeDefault string    `xml:"edgedefault,attr"`
		Nodes       []xmlNode `xml:"node"`
		Edges       []xmlEdge `xml:"edge"`
	} `xml:"graph"`
}

// WriteGraphML writes g as a GraphML document.
func WriteGraphML(w io.Writer, g *Graph) error {
	doc := xmlGraphML{NS: "http://graphml.graphdrawing.org/xmlns"}
	for _, k := range graphmlKeys {
		doc.Keys = append(doc.Keys, xmlKey{ID: k.id, For: k.domain, Name: k.name, Type: k.typ})
	}
	doc.Graph.ID, doc.Graph.EdgeDefault = "parley", "directed"
	for _, n := range g.Nodes {
		xn := xmlNode{ID: n.ID}
		for _, k := range graphmlKeys {
			if k.node == nil {
				continue
			}
			if v := k.node(n); v != "" {
				xn.Data = append(xn.Data, xmlData{Key: k.id, Value: v})
			}
		}
		doc.Graph.Nodes = append(doc.Graph.Nodes, xn)
	}
	for i, e := range g.Edges {
		doc.Graph.Edges = append(doc.Graph.Edges, xmlEdge{
			ID: "e" + strconv.Itoa(i+1), Source: e.From, Target: e.To,
			Data: []xmlData{{Key: "e_kind", Value: e.Kind}},
		})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
