package graph

import (
	"io"

	"github.com/parleyforum/parley/jsonstream"
)

// Format is one way of writing the graph. Write streams it: it holds one node or edge of the
// source at a time (AIF: and each author's name once).
type Format struct {
	Name      string
	MediaType string
	Extension string
	Write     func(io.Writer, Source) error
}

// Formats are the export formats, the default first.
var Formats = []Format{
	{"json", "application/json", "json", writeJSON},
	{"graphml", "application/graphml+xml", "graphml", WriteGraphML},
	{"dot", "text/vnd.graphviz", "dot", WriteDOT},
	{"aif", "application/json", "aif.json", WriteAIF},
}

// FormatByName finds a format.
func FormatByName(name string) (Format, bool) {
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// FormatNames lists the formats' names, the default first.
func FormatNames() []string {
	out := make([]string, len(Formats))
	for i, f := range Formats {
		out[i] = f.Name
	}
	return out
}

// writeJSON writes {"nodes": […], "edges": […]} as encoding/json writes a Graph.
func writeJSON(w io.Writer, src Source) error {
	jw := jsonstream.New(w, jsonstream.Options{})
	if err := JSONNodes(jw, src); err != nil {
		return err
	}
	if err := JSONEdges(jw, src); err != nil {
		return err
	}
	return jw.Close()
}

// JSONNodes writes the member nodes of the native JSON graph into jw's open object.
func JSONNodes(jw *jsonstream.Writer, src Source) error {
	if err := jw.BeginArray("nodes"); err != nil {
		return err
	}
	if err := src.EachNode(func(n *Node) error { return jw.Put("", n) }); err != nil {
		return err
	}
	return jw.End()
}

// JSONEdges writes the member edges of the native JSON graph into jw's open object.
func JSONEdges(jw *jsonstream.Writer, src Source) error {
	if err := jw.BeginArray("edges"); err != nil {
		return err
	}
	if err := src.EachEdge(func(e *Edge, _, _ *Node) error { return jw.Put("", e) }); err != nil {
		return err
	}
	return jw.End()
}
