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

// WriteGraphML writes the graph as a GraphML document, a node or an edge at a time.
func WriteGraphML(w io.Writer, src Source) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	graphml := xml.StartElement{Name: xml.Name{Local: "graphml"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: "http://graphml.graphdrawing.org/xmlns"}}}
	if err := enc.EncodeToken(graphml); err != nil {
		return err
	}
	element := func(name string) xml.StartElement { return xml.StartElement{Name: xml.Name{Local: name}} }
	for _, a := range nodeAttributes {
		if err := enc.EncodeElement(xmlKey{ID: a.id, For: "node", Name: a.name, Type: a.typ}, element("key")); err != nil {
			return err
		}
	}
	if err := enc.EncodeElement(xmlKey{ID: "e_kind", For: "edge", Name: "kind", Type: "string"}, element("key")); err != nil {
		return err
	}
	graph := xml.StartElement{Name: xml.Name{Local: "graph"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "id"}, Value: "parley"}, {Name: xml.Name{Local: "edgedefault"}, Value: "directed"}}}
	if err := enc.EncodeToken(graph); err != nil {
		return err
	}
	err := src.EachNode(func(n *Node) error {
		xn := xmlNode{ID: n.ID}
		for _, a := range nodeAttributes {
			if v := a.of(n); v != "" {
				xn.Data = append(xn.Data, xmlData{Key: a.id, Value: v})
			}
		}
		return enc.EncodeElement(xn, element("node"))
	})
	if err != nil {
		return err
	}
	edges := 0
	err = src.EachEdge(func(e *Edge, _, _ *Node) error {
		edges++
		return enc.EncodeElement(xmlEdge{ID: "e" + strconv.Itoa(edges), Source: e.From, Target: e.To,
			Data: []xmlData{{Key: "e_kind", Value: e.Kind}}}, element("edge"))
	})
	if err != nil {
		return err
	}
	for _, end := range []xml.StartElement{graph, graphml} {
		if err := enc.EncodeToken(end.End()); err != nil {
			return err
		}
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}
