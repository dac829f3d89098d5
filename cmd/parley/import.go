package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// runImport brings the claims of another realm's JSON export or jsonl dataset into this
// forum (PROTOCOL.md § 14): only from a realm trusted with --trust-realm or PARLEY_TRUST_REALMS, only when every
// proof holds and every item obeys this forum's rules, in one transaction; the file is read
// as it streams, and refused past limits.import_max_bytes. A refusal is one line naming what failed, and nothing is
// written; importing the same export again writes nothing.
func runImport(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	thread := f.String("thread", "", "bring the claims into this `thread` (th_N) instead of a new one per source thread")
	f.option("trust-realm")
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("import: name the one FILE to import (see parley help import)")
	}
	var threadID int64
	if *thread != "" {
		id, ok := protocol.ParseIDString(*thread, "th_")
		if !ok {
			return usagef("import: --thread %q is not a thread id (th_N)", *thread)
		}
		threadID = id
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	file, err := os.Open(positional[0])
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer file.Close()
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	svc := protocol.New(db, protocol.Options{Realm: cfg.Realm, Limits: cfg.Limits, TrustRealms: cfg.TrustRealms})
	// The file is read as it streams, within limits.import_max_bytes.
	res, err := svc.ImportFrom(ctx, protocol.OperatorActor(), file, threadID)
	if err != nil {
		return refusalError("import", err)
	}
	if !res.Created() {
		fmt.Fprintf(s.out, "nothing new from realm %s: its %d claims are here already\n", res.Realm, res.Known)
		return nil
	}
	ids := make([]string, len(res.Claims))
	for i, c := range res.Claims {
		ids[i] = c.ID
	}
	fmt.Fprintf(s.out, "imported from realm %s into %s: %d claims (%d new), %d stances, %d keys: %s\n",
		res.Realm, strings.Join(res.Threads, ", "), len(res.Claims), len(res.Claims)-res.Known, res.Stances, res.Keys, strings.Join(ids, ", "))
	return nil
}
