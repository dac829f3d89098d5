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

// measure seeds, for each database, a fresh forum of each size and times every operation on
// them. The forums of one database are measured together: an operation is called on each
// forum in turn, round after round, so that the load of the shared machine, which changes
// over minutes, weighs on the small and the large forum alike — a curve compares sizes
// measured side by side, not at different times. One operation is measured at a time, as a
// benchmark loop does, so that the caches hold what it reads and not what another operation
// read before it (a common word's search reads a tenth of the forum).
func measure(ctx context.Context, cfg config, open opener, log io.Writer) ([]point, error) {
	var points []point
	for _, kind := range cfg.Kinds {
		ps, err := measureKind(ctx, cfg, open, kind, log)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		points = append(points, ps...)
	}
	return points, nil
}

func measureKind(ctx context.Context, cfg config, open opener, kind storage.Kind, log io.Writer) (_ []point, err error) {
	rounds := cfg.Warmup + cfg.Reps
	forums := make([]*forum, len(cfg.Sizes))
	for i, size := range cfg.Sizes {
		db, remove, err := open(ctx, kind)
		if err != nil {
			return nil, err
		}
		defer func() {
			if rerr := remove(); err == nil && rerr != nil {
				err = fmt.Errorf("removing the forum of %d messages: %w", size, rerr)
			}
		}()
		began := time.Now()
		if forums[i], err = newForum(ctx, db, size, rounds); err != nil {
			return nil, fmt.Errorf("%d messages: %w", size, err)
		}
		fmt.Fprintf(log, "parley-curves: %s, %d messages: seeded in %v, prepared in %v\n", kind, size,
			forums[i].seedTime.Round(time.Millisecond), (time.Since(began) - forums[i].seedTime).Round(time.Millisecond))
	}

	ops := make([][]operation, len(forums))
	times := make([][][]time.Duration, len(forums)) // forum, operation, repetition
	for i, f := range forums {
		ops[i] = f.operations()
		times[i] = make([][]time.Duration, len(ops[i]))
	}
	for j := range operationNames {
		for round := 0; round < rounds; round++ {
			for i := range forums {
				op := ops[i][j]
				t0 := time.Now()
				if err := op.run(ctx, round); err != nil {
					return nil, fmt.Errorf("%d messages: %s: %w", cfg.Sizes[i], op.name, err)
				}
				if round >= cfg.Warmup {
					times[i][j] = append(times[i][j], time.Since(t0))
				}
			}
		}
	}

	var points []point
	for i, size := range cfg.Sizes {
		for j, op := range ops[i] {
			p := point{Kind: kind, Messages: size, Op: op.name, Reps: cfg.Reps,
				Median: percentile(times[i][j], 50), P90: percentile(times[i][j], 90)}
			fmt.Fprintf(log, "parley-curves: %s, %d messages: %-18s median %9.3f ms  p90 %9.3f ms\n",
				kind, size, op.name, ms(p.Median), ms(p.P90))
			points = append(points, p)
		}
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
