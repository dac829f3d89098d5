package graph

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/goccy/go-graphviz"
)

// RenderSVG lays the graph out on the server and draws it as SVG, the claims filled by their
// certainty (CertaintyColours), for a page to embed. Graphviz runs compiled to WebAssembly
// inside the process (github.com/goccy/go-graphviz): no cgo, no system package. Graphviz's
// WebAssembly instance is shared, so graphs are parsed and drawn one at a time.
func RenderSVG(ctx context.Context, g *Graph) ([]byte, error) {
	var dot bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
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
	return svg.Bytes(), nil
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
