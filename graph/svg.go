package graph

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
)

// RenderSVG lays the graph out on the server and draws it as an <svg> element, the claims
// filled by their certainty (CertaintyColours), for a page to embed inline: each node is a
// <g> with the node's id and the classes of its type (claims also certainty-<c> and
// grounded-<label>), its words in d's language, a link to d.Link's address. It draws with a
// Renderer of its own; see Renderer for where Graphviz runs.
func RenderSVG(ctx context.Context, g *Graph, d Drawing) ([]byte, error) {
	return (&Renderer{}).RenderSVG(ctx, g, d)
}

// Renderer draws graphs with Graphviz compiled to WebAssembly (github.com/goccy/go-graphviz):
// no cgo, no system package. Each drawing runs in a process of its own — this program started
// again as a drawing process (drawing_process.go) — because go-graphviz instantiates one
// WebAssembly module per process, at start-up, which draws one graph at a time, cannot be
// interrupted (a cancelled call leaves the module closed for good), and whose memory only
// grows. A process per drawing draws beside the others, is killed when its context ends, and
// gives back all its memory when it exits. How many draw at once is the caller's to bound:
// the pages admit each drawing through the admission gate's Drawing class.
//
// The zero Renderer is ready to use.
type Renderer struct {
	// Started, when set, is told of each drawing process once it runs: for tests, which
	// stop and continue it to prove what waits for what.
	Started func(*os.Process)
}

// ErrAbandoned is the error of a drawing whose context ended before it was drawn: its
// process was killed. It wraps the context's error.
var ErrAbandoned = errors.New("the drawing was abandoned")

// RenderSVG is the package's RenderSVG, drawn by r.
func (r *Renderer) RenderSVG(ctx context.Context, g *Graph, d Drawing) ([]byte, error) {
	var dot bytes.Buffer
	if err := writeDOT(&dot, g, d); err != nil {
		return nil, err
	}
	out, _, err := r.draw(ctx, dot.Bytes())
	if err != nil {
		return nil, err
	}
	// Inline in HTML the document is the <svg> element alone: no XML declaration, no DOCTYPE,
	// no comments before it.
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	return out, nil
}

// abandoned is the error of a drawing cut off by the end of ctx.
func abandoned(ctx context.Context) error {
	return fmt.Errorf("%w: %w", ErrAbandoned, context.Cause(ctx))
}
