package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/storage"
)

func runMigrate(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	status := len(positional) == 1 && positional[0] == "status"
	if len(positional) > 0 && !status {
		return usagef("migrate: unexpected argument %q (migrate takes only \"status\")", positional[0])
	}
	db, err := f.openAsItIs(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if status {
		return printMigrationStatus(ctx, s, db)
	}
	applied, err := migrations.Up(ctx, db)
	for _, m := range applied {
		fmt.Fprintf(s.out, "applied %s_%s\n", m.Version, m.Name)
	}
	if err != nil {
		return fmt.Errorf("migrating %s: %w", db.URL(), err)
	}
	if len(applied) == 0 {
		fmt.Fprintln(s.out, "the database is up to date")
	}
	return nil
}

// printMigrationStatus lists every migration this binary knows with the time it was applied
// or "pending", then any applied migration it does not know (written by a newer Parley).
func printMigrationStatus(ctx context.Context, s *stdio, db *storage.DB) error {
	list, unknown, err := migrations.StatusOf(ctx, db)
	if err != nil {
		return fmt.Errorf("reading the migrations of %s: %w", db.URL(), err)
	}
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	for _, m := range list {
		state := "pending"
		if m.AppliedAt != nil {
			state = "applied " + m.AppliedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s_%s\t%s\n", m.Version, m.Name, state)
	}
	for _, name := range unknown {
		fmt.Fprintf(tw, "%s\tapplied, unknown to this parley (written by a newer version?)\n", name)
	}
	return tw.Flush()
}

// openAsItIs opens the configured database without migrating it: for the commands that
// migrate it themselves, or copy it as it is.
func (f *cmdline) openAsItIs(ctx context.Context) (*storage.DB, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, err
	}
	return storage.Open(ctx, cfg.DB)
}

// openMigrated opens the configured database and brings its schema up to date, so that
// every command works on a fresh, empty database too.
func openMigrated(ctx context.Context, cfg Config) (*storage.DB, error) {
	return openMigratedWith(ctx, cfg, storage.Options{})
}

// openMigratedWith is openMigrated with options for the connections (the server's carry a
// statement timeout; migrations lift it for themselves).
func openMigratedWith(ctx context.Context, cfg Config, opts storage.Options) (*storage.DB, error) {
	db, err := storage.OpenWith(ctx, cfg.DB, opts)
	if err != nil {
		return nil, err
	}
	if _, err := migrations.Up(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating %s: %w", db.URL(), err)
	}
	return db, nil
}
