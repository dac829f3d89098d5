package browser

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"sort"
	"testing"
)

// The screenshots kept in docs/screenshots must stay small (each under 250 KB): a page is a
// few flat colours and the anti-aliased edges of its text, so the 256 colours it uses most,
// every other pixel drawn in the nearest of them, look the same to the eye at a fraction of
// the size of a full-colour PNG.

// paletted re-encodes a PNG with the 256 colours it uses most.
func paletted(raw []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[rgba(img.At(x, y))]++
		}
	}
	byUse := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		byUse = append(byUse, c)
	}
	sort.Slice(byUse, func(i, j int) bool {
		if counts[byUse[i]] != counts[byUse[j]] {
			return counts[byUse[i]] > counts[byUse[j]]
		}
		return lessRGBA(byUse[i], byUse[j])
	})
	pal := color.Palette{}
	for _, c := range byUse[:min(256, len(byUse))] {
		pal = append(pal, c)
	}
	nearest := map[color.RGBA]uint8{}
	out := image.NewPaletted(b, pal)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := rgba(img.At(x, y))
			i, ok := nearest[c]
			if !ok {
				i = uint8(pal.Index(c))
				nearest[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func rgba(c color.Color) color.RGBA { return color.RGBAModel.Convert(c).(color.RGBA) }

func lessRGBA(a, b color.RGBA) bool {
	return uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A) < uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A)
}

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
