package graph

import (
	"math"
	"strconv"
)

// Text on a filled node is black or white, whichever contrasts more with the fill by WCAG
// 2.x's formula, so that every label reads at 4.5:1 or better (WCAG 1.4.3, AA) whatever the
// palette: black on the dark green of "verified" is only 4.1:1, white on it 5.1:1.

const (
	black = "#000000"
	white = "#ffffff"
)

// TextColour is the colour of text drawn on fill (#rrggbb): black or white, the one of
// higher contrast.
func TextColour(fill string) string {
	if ContrastRatio(white, fill) > ContrastRatio(black, fill) {
		return white
	}
	return black
}

// ContrastRatio is WCAG's contrast ratio of two #rrggbb colours, from 1 to 21.
func ContrastRatio(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is WCAG's relative luminance of a #rrggbb colour; anything else counts as black.
func luminance(hex string) float64 {
	if len(hex) != 7 || hex[0] != '#' {
		return 0
	}
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if err != nil {
		return 0
	}
	channel := func(shift uint) float64 {
		c := float64((v>>shift)&0xff) / 255
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*channel(16) + 0.7152*channel(8) + 0.0722*channel(0)
}
