package graph

import (
	"math"
	"testing"
)

// Every fill the graph draws text on gets a text colour that reads at 4.5:1 or better; the
// formula is WCAG's (checked on known pairs).
func TestTextContrastsWithEveryFill(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{{black, white, 21}, {white, white, 1}, {black, "#2e7d32", 4.1}, {white, "#2e7d32", 5.13}} {
		if got := ContrastRatio(c.a, c.b); math.Abs(got-c.want) > 0.02 {
			t.Errorf("contrast of %s on %s is %.2f, want %.2f", c.a, c.b, got, c.want)
		}
	}
	fills := map[string]string{"plain node": plainFill}
	for certainty, fill := range CertaintyColours {
		fills[certainty] = fill
	}
	if len(CertaintyColours) != 6 {
		t.Errorf("%d certainty colours, want one for each of the six certainties", len(CertaintyColours))
	}
	for name, fill := range fills {
		text := TextColour(fill)
		if r := ContrastRatio(text, fill); r < 4.5 {
			t.Errorf("%s: text %s on %s is %.2f:1, below 4.5:1", name, text, fill, r)
		}
	}
	if TextColour(CertaintyColours["verified"]) != white {
		t.Error("the dark green of verified is not written on in white")
	}
}
