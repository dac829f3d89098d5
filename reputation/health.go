package reputation

import (
	"context"
	"slices"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// The forum's health (the page /health): the seed's design goal made visible. How many
// proposals a human confirmed and how many one had to correct, how long a confirmation took,
// claims by their certainty, the seals a refutation overturned, and the threads waiting
// longest — over the last day, week or all time. These are facts of the record, counted the
// way the record counts them (ProposalFate, protocol.Certainty), and no policy's scores: a
// second policy changes nothing here.

// The periods of the health page. Days and hours are UTC's.
const (
	PeriodDay  = "day"  // the current hour and the 23 before it
	PeriodWeek = "week" // today and the six days before it
	PeriodAll  = "all"  // since the forum began
)

// Periods are the periods in the order the page offers them.
var Periods = []string{PeriodDay, PeriodWeek, PeriodAll}

// Units of the chart's bars.
const (
	UnitHour  = "hour"
	UnitDay   = "day"
	UnitMonth = "month"
)

// HealthListed is how many overturned seals and waiting threads the page lists.
const (
	HealthOverturnedListed = 50
	HealthWaitingListed    = 10
)

// allDaysAtMost is the longest span period=all draws a bar a day for; beyond it a bar is a
// month.
const allDaysAtMost = 31

// Health is the forum's health over one period, as one reader may read it.
type Health struct {
	Period string
	Since  *time.Time // nil for PeriodAll
	Now    time.Time

	Proposals Proposals
	// ToConfirmation is the time from a proposal to its confirmation, over the confirmed.
	ToConfirmation Durations
	Claims         Claims

	OverturnedCount int
	Overturned      []storage.OverturnedSeal // the latest HealthOverturnedListed
	Waiting         []WaitingThread          // the HealthWaitingListed waiting longest

	Unit string   // of the chart's bars
	Bars []Bucket // the proposals by when they were made, oldest first
}

// WaitingThread is a thread waiting, with its title as the reader reads it: nil while it
// comes from a hidden opening message and the reader is no human signed in (§ 18).
type WaitingThread struct {
	storage.WaitingThread
	ThreadTitle *string
}

// Durations are the median and the longest of some durations; zero when there are none.
type Durations struct {
	Count   int
	Median  time.Duration
	Longest time.Duration
}

// Bucket is one bar of the chart: the proposals made from Start until the next bar's start.
type Bucket struct {
	Start time.Time
	Proposals
}

// ValidPeriod reports whether p is one of Periods.
func ValidPeriod(p string) bool { return slices.Contains(Periods, p) }

// Health reads the forum's health over period in one snapshot, within a's rooms.
func (s *Service) Health(ctx context.Context, a *protocol.Actor, period string) (*Health, error) {
	if !ValidPeriod(period) {
		return nil, protocol.Refuse(protocol.ReasonInvalidBody, "period must be day, week or all, not %q", period)
	}
	if err := protocol.RequireRight(a, protocol.RightRead); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	h := &Health{Period: period, Now: now, Unit: UnitDay}
	var scope storage.RecordScope
	if s.threads != nil {
		scope.Threads = s.threads(a)
	}
	switch period {
	case PeriodDay:
		h.Unit = UnitHour
		scope.Since = now.Truncate(time.Hour).Add(-23 * time.Hour)
	case PeriodWeek:
		scope.Since = startOf(UnitDay, now).AddDate(0, 0, -6)
	}
	if !scope.Since.IsZero() {
		h.Since = &scope.Since
	}
	kinds, acts := stateActs()
	var proposals []storage.StateEventFacts
	var claims []storage.ClaimFacts
	var waiting []storage.WaitingThread
	err := s.db.Snapshot(ctx, func(ctx context.Context, r *storage.Forum) error {
		var err error
		if proposals, err = r.RecordProposals(ctx, scope, kinds, acts, protocol.LockLabelPrefix); err != nil {
			return err
		}
		if claims, err = r.RecordClaims(ctx, scope); err != nil {
			return err
		}
		if h.OverturnedCount, h.Overturned, err = r.SealsOverturned(ctx, scope, HealthOverturnedListed); err != nil {
			return err
		}
		waiting, err = r.ThreadsWaitingLongest(ctx, scope, HealthWaitingListed)
		return err
	})
	if err != nil {
		return nil, fault(err)
	}
	for _, w := range waiting {
		h.Waiting = append(h.Waiting, WaitingThread{WaitingThread: w, ThreadTitle: protocol.ThreadTitleFor(w.Title, w.TitleHidden, a)})
	}
	for _, c := range claims {
		h.Claims.add(protocol.Certainty(protocol.ClaimState(c.State), protocol.Expired(c.ValidUntil, now)))
	}
	h.count(proposals)
	return h, nil
}

// count sorts the proposals by their fate, into the totals and the chart's bars, and
// measures the time each confirmed one took.
func (h *Health) count(proposals []storage.StateEventFacts) {
	first := now0(h)
	if h.Since == nil && h.Unit == UnitDay {
		for _, p := range proposals {
			if p.At.Before(first) {
				first = p.At.UTC()
			}
		}
		if startOf(UnitDay, first).AddDate(0, 0, allDaysAtMost).Before(startOf(UnitDay, h.Now)) {
			h.Unit = UnitMonth
		}
	}
	for at := startOf(h.Unit, first); !at.After(h.Now); at = next(h.Unit, at) {
		h.Bars = append(h.Bars, Bucket{Start: at})
	}
	var waits []time.Duration
	for _, p := range proposals {
		fate := ProposalFate(p)
		h.Proposals.add(fate)
		if i := h.bar(p.At); i >= 0 {
			h.Bars[i].Proposals.add(fate)
		}
		if fate == FateConfirmed && p.NextAt != nil {
			waits = append(waits, p.NextAt.Sub(p.At))
		}
	}
	h.ToConfirmation = durations(waits)
}

// now0 is where the bars begin before any proposal is looked at: the period's start, or for
// all time the present.
func now0(h *Health) time.Time {
	if h.Since != nil {
		return *h.Since
	}
	return h.Now
}

// bar is the index of the bar at falls in, -1 for none.
func (h *Health) bar(at time.Time) int {
	start := startOf(h.Unit, at.UTC())
	for i, b := range h.Bars {
		if b.Start.Equal(start) {
			return i
		}
	}
	return -1
}

func (p *Proposals) add(f Fate) {
	switch f {
	case FateConfirmed:
		p.Confirmed++
	case FateCorrected:
		p.Corrected++
	default:
		p.Open++
	}
}

// Total is every proposal counted.
func (p Proposals) Total() int { return p.Confirmed + p.Corrected + p.Open }

// startOf is the beginning of the hour, the UTC day or the UTC month at is in.
func startOf(unit string, at time.Time) time.Time {
	at = at.UTC()
	switch unit {
	case UnitHour:
		return at.Truncate(time.Hour)
	case UnitMonth:
		return time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	default:
		return time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	}
}

func next(unit string, at time.Time) time.Time {
	switch unit {
	case UnitHour:
		return at.Add(time.Hour)
	case UnitMonth:
		return at.AddDate(0, 1, 0)
	default:
		return at.AddDate(0, 0, 1)
	}
}

// durations are the median (the mean of the middle two of an even count) and the longest.
func durations(d []time.Duration) Durations {
	if len(d) == 0 {
		return Durations{}
	}
	slices.Sort(d)
	n := len(d)
	median := d[n/2]
	if n%2 == 0 {
		median = (d[n/2-1] + d[n/2]) / 2
	}
	return Durations{Count: n, Median: median, Longest: d[n-1]}
}
