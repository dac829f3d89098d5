package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parleyforum/parley/storage"
)

// kindStyle gives each database its colour and name in the charts.
var kindStyle = map[storage.Kind]struct {
	name  string
	color color.Color
}{
	storage.SQLite:   {"SQLite", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
	storage.Postgres: {"Postgres", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
}

// drawChart draws the operation op over the forum sizes as an SVG file: x is the forum's size,
// y the time per operation in milliseconds, both on log scales (a flat line still reads as
// flat, and a p90 a hundred times its median, as a busy machine makes them, does not flatten
// the medians to the axis); per database a solid line for the median and a dashed one for the
// 90th percentile. With png it also writes a PNG file beside it, for viewers without SVG.
func drawChart(path, op string, points []point, png bool) error {
	p := plot.New()
	p.Title.Text = operationTitles[op]
	p.X.Label.Text = "forum size (messages, log scale)"
	p.Y.Label.Text = "time per operation (ms)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())

	var sizes []int
	top, bottom := 0.0, math.Inf(1)
	for _, kind := range []storage.Kind{storage.SQLite, storage.Postgres} {
		var median, p90 plotter.XYs
		for _, pt := range points {
			if pt.Kind == kind && pt.Op == op {
				median = append(median, plotter.XY{X: float64(pt.Messages), Y: ms(pt.Median)})
				p90 = append(p90, plotter.XY{X: float64(pt.Messages), Y: ms(pt.P90)})
				top, bottom = max(top, ms(pt.P90)), min(bottom, ms(pt.Median))
				if !slices.Contains(sizes, pt.Messages) {
					sizes = append(sizes, pt.Messages)
				}
			}
		}
		if len(median) == 0 {
			continue
		}
		style := kindStyle[kind]
		line, dots, err := plotter.NewLinePoints(median)
		if err != nil {
			return err
		}
		line.Color, line.Width = style.color, vg.Points(1.5)
		dots.Color, dots.Shape = style.color, draw.CircleGlyph{}
		upper, err := plotter.NewLine(p90)
		if err != nil {
			return err
		}
		upper.Color, upper.Width = style.color, vg.Points(1)
		upper.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line, dots, upper)
		p.Legend.Add(style.name+" median", line, dots)
		p.Legend.Add(style.name+" p90", upper)
	}
	if len(sizes) == 0 {
		return fmt.Errorf("no measurements of %s", op)
	}
	slices.Sort(sizes)
	p.Y.Min, p.Y.Max = bottom/2, top*8 // room above the lines for the legend
	ticks := make([]plot.Tick, len(sizes))
	for i, n := range sizes {
		ticks[i] = plot.Tick{Value: float64(n), Label: sizeLabel(n)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = plainTicks{}
	// Room on either side of the outer sizes, so that their points are not on the frame.
	p.X.Min, p.X.Max = float64(sizes[0])/1.5, float64(sizes[len(sizes)-1])*1.5
	w, h := 14*vg.Centimeter, 9*vg.Centimeter
	if png {
		if err := p.Save(w, h, strings.TrimSuffix(path, ".svg")+".png"); err != nil {
			return err
		}
	}
	return p.Save(w, h, path)
}

// sizeLabel writes a forum size as 10k, 1M or 2.5k.
func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n >= 1000 && n%100 == 0:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.Itoa(n)
}

// plainTicks are the ticks of a log axis at 1, 2 and 5 times each power of ten, labelled
// without trailing zeros: 0.5, 20, 2000.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); math.Pow(10, float64(e)) <= hi; e++ {
		for _, m := range []float64{1, 2, 5} {
			if v := m * math.Pow(10, float64(e)); v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', max(0, -e), 64)})
			}
		}
	}
	return ticks
}
