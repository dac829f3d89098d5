package main

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parleyforum/parley/protocol"
)

// runExport writes the claim graph of one thread or of the whole forum to standard output
// (PROTOCOL.md § 12); in JSON also the threads, messages, events and claims; in jsonl the
// whole dataset of § 15, written as it is read.
func runExport(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	thread := f.String("thread", "", "export only this `thread` (th_N)")
	room := f.String("room", "", "export only the threads of this `room` (rm_N or its name) and of the rooms inside it")
	format := f.String("format", "json", "the `format`: "+strings.Join(protocol.ExportFormatNames(), ", "))
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	if !slices.Contains(protocol.ExportFormatNames(), *format) {
		return usagef("export: --format %q is not one of %s", *format, strings.Join(protocol.ExportFormatNames(), ", "))
	}
	var threadID int64
	if *thread != "" {
		id, ok := protocol.ParseIDString(*thread, "th_")
		if !ok {
			return usagef("export: --thread %q is not a thread id (th_N)", *thread)
		}
		threadID = id
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
	svc := protocol.New(db, protocol.Options{Realm: cfg.Realm})
	scope, err := svc.RoomScope(ctx, protocol.OperatorActor(), *room)
	if err != nil {
		return refusalError("export: --room", err)
	}
	out := bufio.NewWriter(s.out)
	if err := svc.WriteExportIn(ctx, scope, threadID, *format, out); err != nil {
		if e, ok := protocol.AsError(err); ok {
			return fmt.Errorf("export: %s", e.Message)
		}
		return fmt.Errorf("export: %w", err)
	}
	return out.Flush()
}
