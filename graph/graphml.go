package graph

import (
	"encoding/xml"
	"io"
	"strconv"
)

// GraphML (graphml.graphdrawing.org): every node attribute (nodeAttributes) and the edges'
// kind declared once as a typed <key>, so that tools (Gephi, yEd, NetworkX, igraph,
// graphology) read them with their types.

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
	for _, a := range nodeAttributes {
		doc.Keys = append(doc.Keys, xmlKey{ID: a.id, For: "node", Name: a.name, Type: a.typ})
	}
	doc.Keys = append(doc.Keys, xmlKey{ID: "e_kind", For: "edge", Name: "kind", Type: "string"})
	doc.Graph.ID, doc.Graph.EdgeDefault = "parley", "directed"
	for _, n := range g.Nodes {
		xn := xmlNode{ID: n.ID}
		for _, a := range nodeAttributes {
			if v := a.of(n); v != "" {
				xn.Data = append(xn.Data, xmlData{Key: a.id, Value: v})
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
