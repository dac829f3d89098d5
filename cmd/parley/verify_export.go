package main

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/parleyforum/parley/graph"
)

// runVerifyExport checks every proof of an export offline (PROTOCOL.md § 14): the export's
// own proof by the realm key, each key's binding, each signed stance's document, and each
// version 1 signature — in the JSON of parley export, GraphML, AIF or the JSON Lines
// dataset (also its hash, order and counts) — or the proof of any
// JSON document secured by an eddsa-jcs-2022 DataIntegrityProof. It needs no database and
// no server. It prints one line per proof and a summary, and fails (exit 1) when one does
// not hold.
func runVerifyExport(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("verify-export: name the one FILE to check (see parley help verify-export)")
	}
	report, err := checkExportFile(positional[0])
	if err != nil {
		return fmt.Errorf("verify-export: %s: %w", positional[0], err)
	}
	for _, l := range report.Lines {
		if l.Err != nil {
			fmt.Fprintf(s.out, "FAIL %s: %v\n", l.What, l.Err)
			continue
		}
		fmt.Fprintf(s.out, "ok   %s\n", l.What)
	}
	failed := report.Failed()
	fmt.Fprintf(s.out, "%d proofs hold, %d fail, %d stances unsigned\n", len(report.Lines)-failed, failed, report.Unsigned)
	if failed > 0 {
		return fmt.Errorf("verify-export: %d of %d proofs do not hold", failed, len(report.Lines))
	}
	if len(report.Lines) == 0 {
		return fmt.Errorf("verify-export: %s carries no proof to check", positional[0])
	}
	return nil
}

// checkExportFile checks the file: a dataset (JSON Lines) as it is read, without holding it,
// anything else whole.
func checkExportFile(path string) (*graph.CustodyReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first, err := bufio.NewReaderSize(f, 1<<20).ReadBytes('\n')
	if err != nil && len(first) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	if graph.LooksLikeDataset(first) {
		if _, err := f.Seek(0, 0); err != nil {
			return nil, err
		}
		return graph.CheckDataset(f)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return graph.CheckCustody(data)
}
