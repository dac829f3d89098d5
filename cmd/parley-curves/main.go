// Command parley-curves measures how Parley's operations scale with the size of the forum and
// draws the curves: for each database and each forum size it seeds a fresh forum
// (storage/benchdata), times the operations through the operation layer (protocol.Service,
// the calls the transports make), and writes the medians and 90th percentiles as a CSV file
// and one SVG chart per operation.
//
//	parley-curves [--sizes 10000,100000,1000000] [--databases sqlite,postgres]
//	              [--reps 15] [--warmup 3] [--out docs/curves] [--png] [--postgres URL]
//
// Without --postgres (or PARLEY_TEST_POSTGRES) it starts a throwaway Postgres of its own and
// stops it at the end. `make curves` runs it with the defaults.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/parleyforum/parley/storage"
)

// envPostgres names a running Postgres server to create the forums on, as for the tests.
const envPostgres = "PARLEY_TEST_POSTGRES"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("parley-curves", flag.ContinueOnError)
	sizes := fs.String("sizes", "10000,100000,1000000", "forum sizes in messages, comma-separated")
	databases := fs.String("databases", "sqlite,postgres", "databases to measure, comma-separated")
	reps := fs.Int("reps", 15, "timed repetitions of each operation per point")
	warmup := fs.Int("warmup", 3, "untimed repetitions before them")
	out := fs.String("out", "docs/curves", "folder for curves.csv and the charts")
	png := fs.Bool("png", false, "write each chart as a PNG file too")
	pgURL := fs.String("postgres", os.Getenv(envPostgres), "a Postgres server to create the forums on (default: start one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := config{Reps: *reps, Warmup: *warmup}
	var err error
	if cfg.Sizes, err = parseSizes(*sizes); err == nil {
		cfg.Kinds, err = parseKinds(*databases)
	}
	if err == nil && (cfg.Reps < 1 || cfg.Warmup < 0) {
		err = fmt.Errorf("--reps must be at least 1 and --warmup at least 0")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley-curves:", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	forums, err := newForums(ctx, cfg.Kinds, *pgURL, os.TempDir())
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley-curves:", err)
		return 1
	}
	points, err := measure(ctx, cfg, forums.open, os.Stderr)
	if cerr := forums.close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = write(*out, points, *png)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley-curves:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "parley-curves: wrote %s in %v\n", *out, time.Since(began).Round(time.Second))
	return 0
}

func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < minMessages {
			return nil, fmt.Errorf("--sizes: %q is not a number of messages of at least %d", f, minMessages)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func parseKinds(s string) ([]storage.Kind, error) {
	var kinds []storage.Kind
	for _, f := range strings.Split(s, ",") {
		switch k := storage.Kind(strings.TrimSpace(f)); k {
		case storage.SQLite, storage.Postgres:
			kinds = append(kinds, k)
		default:
			return nil, fmt.Errorf("--databases: %q is neither sqlite nor postgres", f)
		}
	}
	return kinds, nil
}
