package main

import (
	"context"
	"fmt"
	"os"

	"github.com/parleyforum/parley/graph"
)

// runVerifyExport checks every signature of an export offline (PROTOCOL.md § 13 signed):
// the JSON of parley export or GET /v1/graph, GraphML or AIF. It needs no database and no
// server: the export carries each signature with its public key. It prints one line per
// signature and fails (exit 1) when one does not hold.
func runVerifyExport(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("verify-export: name the one FILE to check (see parley help verify-export)")
	}
	data, err := os.ReadFile(positional[0])
	if err != nil {
		return fmt.Errorf("verify-export: %w", err)
	}
	stances, err := graph.ReadSignedStances(data)
	if err != nil {
		return fmt.Errorf("verify-export: %s: %w", positional[0], err)
	}
	failed := 0
	for _, st := range stances {
		what := fmt.Sprintf("%s by %s on %s, %s at %s", st.Stance, st.By, st.Claim, st.Signature.Key, st.Signature.At)
		if err := st.Check(); err != nil {
			failed++
			fmt.Fprintf(s.out, "FAIL %s: %v\n", what, err)
			continue
		}
		fmt.Fprintf(s.out, "ok   %s\n", what)
	}
	if failed > 0 {
		return fmt.Errorf("verify-export: %d of %d signatures do not hold", failed, len(stances))
	}
	return nil
}
