package benchdata

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Seeding in bulk. Row by row, the schema's triggers write a feed row for every seeded message
// and event (and, on Postgres, announce each on a channel nobody listens to while seeding) and
// the search index takes every message one at a time; for a forum of a million messages that
// was most of the seed. So Seed pauses, inside its transaction, the triggers that write the
// feed and announce, and on Postgres drops the search index; after the inserts it writes the
// feed in bulk in the order the triggers would have (feedRebuild), builds the index again in
// one pass and resumes the triggers. The pause is part of the transaction: a failed seed rolls
// it back with the rows. Every other trigger of the schema (and every foreign key) stays on.

// pausedTriggers are the triggers Seed pauses: those that write the feed (rebuilt by
// feedRebuild) and, on Postgres, those that only announce.
var pausedTriggers = map[storage.Kind][][2]string{ // table, trigger
	storage.Postgres: {{"messages", "messages_feed"}, {"events", "events_feed"}, {"threads", "threads_announce_inbox"}},
	storage.SQLite:   {{"messages", "messages_feed"}, {"events", "events_feed"}},
}

// pausedIndexes are the indexes Seed drops and builds again after the rows are in.
var pausedIndexes = map[storage.Kind][]string{storage.Postgres: {"messages_search_idx"}}

// feedRebuild writes the feed rows of the seeded messages and events in the order the
// triggers would have written them: Seed inserts every message, then every thread's opening
// event, then every answer's event, each in the order of its ids, one row after another.
var feedRebuild = []string{
	`INSERT INTO feed (thread_id, message_id) SELECT thread_id, id FROM messages WHERE id > ?mbase ORDER BY id`,
	`INSERT INTO feed (thread_id, event_id) SELECT thread_id, id FROM events WHERE id > ?ebase AND act = 'ask' ORDER BY id`,
	`INSERT INTO feed (thread_id, event_id) SELECT thread_id, id FROM events WHERE id > ?ebase AND act = 'answer' ORDER BY id`,
}

// pause pauses the triggers and drops the indexes of the bulk seed, in tx, and returns the
// statements that resume them.
func pause(ctx context.Context, tx bun.Tx, kind storage.Kind) ([]string, error) {
	var resume []string
	for _, name := range pausedIndexes[kind] {
		var def string
		if err := tx.NewRaw("SELECT indexdef FROM pg_indexes WHERE indexname = ?", name).Scan(ctx, &def); err != nil {
			return nil, fmt.Errorf("benchdata: the index %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, "DROP INDEX "+name); err != nil {
			return nil, fmt.Errorf("benchdata: dropping %s: %w", name, err)
		}
		resume = append(resume, escapeArgs(def))
	}
	for _, tt := range pausedTriggers[kind] {
		table, trigger := tt[0], tt[1]
		if kind == storage.Postgres {
			if _, err := tx.ExecContext(ctx, "ALTER TABLE "+table+" DISABLE TRIGGER "+trigger); err != nil {
				return nil, fmt.Errorf("benchdata: pausing %s: %w", trigger, err)
			}
			resume = append(resume, "ALTER TABLE "+table+" ENABLE TRIGGER "+trigger)
			continue
		}
		// SQLite cannot disable a trigger: it is dropped and made again from its own text.
		var def string
		if err := tx.NewRaw("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", trigger).Scan(ctx, &def); err != nil {
			return nil, fmt.Errorf("benchdata: the trigger %s: %w", trigger, err)
		}
		if _, err := tx.ExecContext(ctx, "DROP TRIGGER "+trigger); err != nil {
			return nil, fmt.Errorf("benchdata: pausing %s: %w", trigger, err)
		}
		resume = append(resume, escapeArgs(def))
	}
	return resume, nil
}

// escapeArgs keeps bun from reading a ? of a schema statement as an argument.
func escapeArgs(stmt string) string { return strings.ReplaceAll(stmt, "?", `\?`) }
