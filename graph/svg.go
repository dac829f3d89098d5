package graph

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/goccy/go-graphviz"
)

// RenderSVG lays the graph out on the server and draws it as an <svg> element, the claims
// filled by their certainty (CertaintyColours), for a page to embed inline: each node is a
// <g> with the node's id and the classes of its type (claims also certainty-<c> and
// grounded-<label>), its words in d's language, a link to d.Link's address. Graphviz runs compiled to WebAssembly
// inside the process (github.com/goccy/go-graphviz): no cgo, no system package. Graphviz's
// WebAssembly instance is shared, so graphs are parsed and drawn one at a time.
func RenderSVG(ctx context.Context, g *Graph, d Drawing) ([]byte, error) {
	var dot bytes.Buffer
	if err := writeDOT(&dot, g, d); err != nil {
		return nil, err
	}
	gv, err := renderer(ctx)
	if err != nil {
		return nil, err
	}
	rendering.Lock()
	defer rendering.Unlock()
	parsed, err := graphviz.ParseBytes(dot.Bytes())
	if err != nil {
		return nil, fmt.Errorf("graphviz cannot read the DOT of the graph: %w", err)
	}
	defer parsed.Close()
	var svg bytes.Buffer
	if err := gv.Render(ctx, parsed, graphviz.SVG, &svg); err != nil {
		return nil, fmt.Errorf("graphviz cannot lay the graph out: %w", err)
	}
	// Inline in HTML the document is the <svg> element alone: no XML declaration, no DOCTYPE,
	// no comments before it.
	out := svg.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	return out, nil
}

// Graphviz is compiled from WebAssembly once per process, which takes a moment; one instance
// draws one graph at a time.
var (
	rendererOnce sync.Once
	rendererGV   *graphviz.Graphviz
	rendererErr  error
	rendering    sync.Mutex
)

func renderer(ctx context.Context) (*graphviz.Graphviz, error) {
	rendererOnce.Do(func() {
		rendererGV, rendererErr = graphviz.New(context.WithoutCancel(ctx))
	})
	return rendererGV, rendererErr
}
