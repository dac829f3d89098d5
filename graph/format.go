package graph

import (
	"encoding/json"
	"io"
)

// Format is one way of writing the graph.
type Format struct {
	Name      string
	MediaType string
	Extension string
	Write     func(io.Writer, *Graph) error
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

func writeJSON(w io.Writer, g *Graph) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(g)
}
