package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// A picture of few colours keeps them exactly; one of more keeps 256 and draws the others in
// the nearest.
func TestPaletted(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := 0; x < 40; x++ {
		for y := 0; y < 20; y++ {
			img.Set(x, y, color.RGBA{R: uint8(x * 6), G: uint8(y), B: 0x99, A: 0xff})
		}
	}
	img.Set(0, 0, color.RGBA{R: 0x1f, G: 0x4f, B: 0x99, A: 0xff})
	var raw bytes.Buffer
	if err := png.Encode(&raw, img); err != nil {
		t.Fatal(err)
	}
	got, err := paletted(raw.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := png.Decode(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := out.(*image.Paletted)
	if !ok || len(p.Palette) != 256 {
		t.Fatalf("the picture of 800 colours came back as %T", out)
	}
	if c := rgba(out.At(5, 5)); c != (color.RGBA{R: 30, G: 5, B: 0x99, A: 0xff}) {
		t.Logf("a rare colour drawn as %v", c) // the nearest kept colour: not necessarily itself
	}
	if c := rgba(out.At(39, 19)); c.B != 0x99 {
		t.Errorf("a pixel's colour moved far: %v", c)
	}
}
