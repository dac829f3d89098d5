package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// csvName is the file of the raw numbers, beside the charts.
const csvName = "curves.csv"

// csvHeader names the columns of the CSV file: times in milliseconds.
var csvHeader = []string{"database", "messages", "operation", "median_ms", "p90_ms", "reps"}

// write writes the numbers and one chart per operation into the folder dir, with png the
// charts as PNG files too.
func write(dir string, points []point, png bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, csvName), points); err != nil {
		return err
	}
	for _, op := range operationNames {
		if err := drawChart(filepath.Join(dir, op+".svg"), op, points, png); err != nil {
			return fmt.Errorf("chart of %s: %w", op, err)
		}
	}
	return nil
}

func writeCSV(path string, points []point) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	for _, p := range points {
		_ = w.Write([]string{string(p.Kind), strconv.Itoa(p.Messages), p.Op,
			strconv.FormatFloat(ms(p.Median), 'f', 3, 64), strconv.FormatFloat(ms(p.P90), 'f', 3, 64),
			strconv.Itoa(p.Reps)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
