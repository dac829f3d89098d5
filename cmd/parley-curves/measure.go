package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/parleyforum/parley/storage"
)

// config is what one run measures.
type config struct {
	Sizes  []int          // forum sizes, in messages
	Kinds  []storage.Kind // databases
	Reps   int            // timed repetitions of each operation per point
	Warmup int            // untimed repetitions before them
}

// point is one operation measured on one database at one forum size.
type point struct {
	Kind     storage.Kind
	Messages int
	Op       string
	Median   time.Duration
	P90      time.Duration
	Reps     int
}

// measure seeds, for each database and size, a fresh forum and times every operation on it.
// The operations take turns, one repetition of each per round, so that a burst of load on the
// shared machine weighs on all of them alike rather than on whichever ran at the time.
func measure(ctx context.Context, cfg config, open opener, log io.Writer) ([]point, error) {
	var points []point
	for _, kind := range cfg.Kinds {
		for _, size := range cfg.Sizes {
			ps, err := measureForum(ctx, cfg, open, kind, size, log)
			if err != nil {
				return nil, fmt.Errorf("%s, %d messages: %w", kind, size, err)
			}
			points = append(points, ps...)
		}
	}
	return points, nil
}

func measureForum(ctx context.Context, cfg config, open opener, kind storage.Kind, size int, log io.Writer) (_ []point, err error) {
	db, remove, err := open(ctx, kind)
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := remove(); err == nil && rerr != nil {
			err = fmt.Errorf("removing the forum: %w", rerr)
		}
	}()
	began := time.Now()
	f, err := newForum(ctx, db, size, cfg.Warmup+cfg.Reps)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "parley-curves: %s, %d messages: seeded in %v, prepared in %v\n",
		kind, size, f.seedTime.Round(time.Millisecond), (time.Since(began) - f.seedTime).Round(time.Millisecond))

	ops := f.operations()
	times := make([][]time.Duration, len(ops))
	for round := 0; round < cfg.Warmup+cfg.Reps; round++ {
		for i, op := range ops {
			t0 := time.Now()
			if err := op.run(ctx, round); err != nil {
				return nil, fmt.Errorf("%s: %w", op.name, err)
			}
			if round >= cfg.Warmup {
				times[i] = append(times[i], time.Since(t0))
			}
		}
	}
	var points []point
	for i, op := range ops {
		p := point{Kind: kind, Messages: size, Op: op.name, Reps: cfg.Reps,
			Median: percentile(times[i], 50), P90: percentile(times[i], 90)}
		fmt.Fprintf(log, "parley-curves: %s, %d messages: %-18s median %9.3f ms  p90 %9.3f ms\n",
			kind, size, op.name, ms(p.Median), ms(p.P90))
		points = append(points, p)
	}
	return points, nil
}

// percentile is the nearest-rank percentile q (0 < q ≤ 100) of the durations.
func percentile(d []time.Duration, q int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	rank := (q*len(s) + 99) / 100 // ⌈q·n/100⌉
	return s[max(rank, 1)-1]
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
