package main

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestMain(m *testing.M) { storagetest.Main(m) }

// TestCurves runs the whole measurement on two tiny forums of each database and checks what it
// writes: a CSV row for every database × size × operation, with times, and an SVG chart per
// operation that is well-formed XML.
func TestCurves(t *testing.T) {
	cfg := config{Sizes: []int{1000, 2000}, Kinds: storagetest.Kinds(), Reps: 3, Warmup: 1}
	open := func(_ context.Context, kind storage.Kind) (*storage.DB, func() error, error) {
		return storagetest.Open(t, kind), func() error { return nil }, nil
	}
	points, err := measure(context.Background(), cfg, open, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := write(dir, points, false); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(filepath.Join(dir, csvName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("the CSV file starts with %v, want the header %v", rows[:min(1, len(rows))], csvHeader)
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		median, err1 := strconv.ParseFloat(r[3], 64)
		p90, err2 := strconv.ParseFloat(r[4], 64)
		if err := errors.Join(err1, err2); err != nil || median <= 0 || p90 < median || r[5] != "3" {
			t.Errorf("row %v: want positive times with p90 ≥ median over 3 repetitions (%v)", r, err)
		}
		key := r[0] + "/" + r[1] + "/" + r[2]
		if seen[key] {
			t.Errorf("row %v appears twice", r)
		}
		seen[key] = true
	}
	for _, kind := range cfg.Kinds {
		for _, size := range cfg.Sizes {
			for _, op := range operationNames {
				if key := string(kind) + "/" + strconv.Itoa(size) + "/" + op; !seen[key] {
					t.Errorf("the CSV file has no row for %s", key)
				}
			}
		}
	}
	if want := len(cfg.Kinds) * len(cfg.Sizes) * len(operationNames); len(rows)-1 != want {
		t.Errorf("the CSV file has %d rows, want %d", len(rows)-1, want)
	}

	for _, op := range operationNames {
		checkSVG(t, filepath.Join(dir, op+".svg"))
	}
}

// checkSVG checks that the file is well-formed XML whose root element is an svg.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		if el, ok := tok.(xml.StartElement); ok && root == "" {
			root = el.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s has the root element %q, want svg", path, root)
	}
}

// TestFlags refuses what the command cannot measure, with a clear message and exit status 2.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--sizes", "10000,abc"},
		{"--sizes", "500"},
		{"--databases", "mysql"},
		{"--reps", "0"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("parley-curves %v exits with %d, want 2", args, code)
		}
	}
}

// TestForumWaitsForTheHorizon prepares a forum while a transaction of someone else on the
// same Postgres server runs, from before the seed until after the new items: the reader's
// catch-up and its five new items are only complete once that transaction has ended.
func TestForumWaitsForTheHorizon(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.Postgres)
	release := storagetest.HoldTransaction(t, db)
	go func() {
		time.Sleep(2 * time.Second) // past the seed and the sends
		release()
	}()
	f, err := newForum(ctx, db, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	if f.inboxItems != 5 {
		t.Fatalf("the reader sees %d new items, want 5", f.inboxItems)
	}
}
