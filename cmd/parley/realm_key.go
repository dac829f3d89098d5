package main

import (
	"context"
	"fmt"

	"github.com/parleyforum/parley/protocol"
)

// runRealmKey prints the forum's realm key (PROTOCOL.md § 14) as a did:key: the key other
// forums name in --trust-realm NAME=DID to accept this forum's exports. On a database that has
// none yet, it is made now, as the first start would.
func runRealmKey(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	key, err := protocol.LoadRealmKey(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out, key.DID())
	return nil
}
