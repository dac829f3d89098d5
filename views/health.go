package views

import (
	"context"
	"strconv"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
)

// HealthView is the data of GET /health.
type HealthView struct {
	Health *reputation.Health
	// Queue is what waits in the moderation queue now, as the navigation counts it: the
	// figure the period's "not yet judged" is often taken for. nil when it was not read.
	Queue *protocol.QueueCounts
}

// The chart of /health: stacked bars of the proposals made in each hour, day or month —
// confirmed at the bottom, then corrected, then not yet judged — drawn here as SVG, with no
// script. The drawing's coordinates are the viewBox's; the SVG scales to its box.
const (
	chartWidth  = 640
	chartHeight = 220
	chartLeft   = 40 // room for the scale's numbers
	chartRight  = 8
	chartTop    = 12
	chartBottom = 28 // room for the bars' labels
	// chartLabels is about how many bars carry a label under them; the last always does.
	chartLabels = 8
)

// chartBar is one bar as drawn: its place, its segments from the bottom up, and its label.
type chartBar struct {
	X, Width int
	Label    string // "" when the bar carries none under it
	LabelX   int
	Day      string // the bar's start, 2006-01-02T15:04Z, for tests and a tooltip
	Segments []chartSegment
	Title    string // what a pointer over the bar reads
}

type chartSegment struct {
	Class     string // confirmed, corrected, open
	Y, Height int
}

// chartTick is a line of the scale with its number.
type chartTick struct {
	Y     int
	Label string
}

// chart computes the drawing of h's bars.
func chart(ctx context.Context, h *reputation.Health) (bars []chartBar, ticks []chartTick) {
	peak := 1
	for _, b := range h.Bars {
		peak = max(peak, b.Total())
	}
	plot := chartHeight - chartTop - chartBottom
	y := func(n int) int { return chartTop + plot - n*plot/peak }
	ticks = []chartTick{{Y: y(0), Label: "0"}, {Y: y(peak), Label: strconv.Itoa(peak)}}
	if peak >= 4 {
		ticks = append(ticks, chartTick{Y: y(peak / 2), Label: strconv.Itoa(peak / 2)})
	}
	n := len(h.Bars)
	if n == 0 {
		return nil, ticks
	}
	slot := (chartWidth - chartLeft - chartRight) / n
	every := max(1, (n+chartLabels-1)/chartLabels)
	for i, b := range h.Bars {
		x := chartLeft + i*slot
		bar := chartBar{X: x + slot/8, Width: max(1, slot*3/4), LabelX: x + slot/2,
			Day: b.Start.UTC().Format("2006-01-02T15:04Z")}
		label := barLabel(ctx, h.Unit, b.Start)
		// Labels are counted back from the last bar, so that the latest always has one.
		if (n-1-i)%every == 0 {
			bar.Label = label
		}
		bar.Title = label + ": " + T(ctx, "health.confirmed") + " " + strconv.Itoa(b.Confirmed) + ", " +
			T(ctx, "health.corrected") + " " + strconv.Itoa(b.Corrected) + ", " +
			T(ctx, "health.open") + " " + strconv.Itoa(b.Open)
		base := 0
		for _, s := range []struct {
			class string
			n     int
		}{{"confirmed", b.Confirmed}, {"corrected", b.Corrected}, {"open", b.Open}} {
			if s.n == 0 {
				continue
			}
			top, bottom := y(base+s.n), y(base)
			bar.Segments = append(bar.Segments, chartSegment{Class: s.class, Y: top, Height: bottom - top})
			base += s.n
		}
		bars = append(bars, bar)
	}
	return bars, ticks
}

// barLabel names a bar by its start: the hour, the day or the month, in UTC.
func barLabel(ctx context.Context, unit string, start time.Time) string {
	tr := page(ctx).Tr
	switch unit {
	case reputation.UnitHour:
		return start.UTC().Format("15:04")
	case reputation.UnitMonth:
		return tr.Month(start)
	default:
		return tr.Day(start)
	}
}

// span is a duration in its largest unit and the next, "2 h 5 min", in the reader's language.
func span(ctx context.Context, d time.Duration) string {
	d = d.Round(time.Second)
	units := []struct {
		id   string
		unit time.Duration
	}{{"health.days", 24 * time.Hour}, {"health.hours", time.Hour}, {"health.minutes", time.Minute}, {"health.seconds", time.Second}}
	for i, u := range units {
		n := int(d / u.unit)
		if n == 0 && i < len(units)-1 {
			continue
		}
		out := T(ctx, u.id, "N", n)
		if i+1 < len(units) {
			if m := int(d % u.unit / units[i+1].unit); m > 0 {
				out += " " + T(ctx, units[i+1].id, "N", m)
			}
		}
		return out
	}
	return ""
}

func healthURL(period string) string { return "/health?period=" + period }
