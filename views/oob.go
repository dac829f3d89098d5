package views

import (
	"context"
	"io"

	"github.com/a-h/templ"
)

// An htmx answer may carry parts besides the one it swaps in place of its target: each
// such part is marked hx-swap-oob and replaces the element with its id. The parts that can
// travel this way (the state panel, the timeline) read the mark from the context.

type oobKey struct{}

// OutOfBand renders c as a part swapped out of band.
func OutOfBand(c templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return c.Render(context.WithValue(ctx, oobKey{}, true), w)
	})
}

// oobAttrs are the attributes of a part rendered out of band, none otherwise.
func oobAttrs(ctx context.Context) templ.Attributes {
	if on, _ := ctx.Value(oobKey{}).(bool); on {
		return templ.Attributes{"hx-swap-oob": "true"}
	}
	return nil
}
