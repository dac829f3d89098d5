// Command palette rewrites PNG screenshots in the 256 colours each uses most, for the copies
// kept in docs/screenshots: `make screenshots` runs it over tests/browser/screenshots.
//
//	go run ./tests/browser/palette FILE.png...
package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"runtime"
	"sort"
	"sync"
)

// maxKeptBytes is the most a screenshot kept in docs/screenshots may weigh.
const maxKeptBytes = 250 << 10

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: palette FILE.png...")
		os.Exit(2)
	}
	files := make(chan string)
	var mu sync.Mutex
	failed := false
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for name := range files {
				msg, err := rewrite(name)
				mu.Lock()
				if err != nil {
					failed = true
					fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				} else {
					fmt.Println(msg)
				}
				mu.Unlock()
			}
		})
	}
	for _, name := range os.Args[1:] {
		files <- name
	}
	close(files)
	wg.Wait()
	if failed {
		os.Exit(1)
	}
}

// rewrite replaces the PNG name with its 256-colour version and says what it weighs.
func rewrite(name string) (string, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	out, err := paletted(raw)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(name, out, 0o644); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("%s: %d KB (was %d KB)", name, len(out)>>10, len(raw)>>10)
	if len(out) > maxKeptBytes {
		msg += fmt.Sprintf(" — over the %d KB a copy in docs/screenshots may weigh", maxKeptBytes>>10)
	}
	return msg, nil
}

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
