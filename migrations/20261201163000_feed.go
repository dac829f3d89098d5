package migrations

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// The feed (PROTOCOL.md § 13): one append-only record of everything a listener is told — each
// new message and each new event (of a thread's state or of a claim) — at a commit-ordered
// position, the same kind of position as the inbox's: on Postgres the writing transaction's
// id and a sequence number, on SQLite (one writer at a time) a row number. Triggers write it,
// so it is part of the writing transaction whichever code path inserts the message or event,
// and on Postgres they announce it on the channel parley_feed, so that listeners of every
// instance wake. The feed's content is read from the tables by position, never taken from the
// announcement.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		stmts := []string{
			`CREATE SEQUENCE feed_seq`,
			`CREATE TABLE feed (
				tx bigint NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
				seq bigint NOT NULL DEFAULT nextval('feed_seq'),
				thread_id bigint NOT NULL REFERENCES threads (id),
				message_id bigint REFERENCES messages (id),
				event_id bigint REFERENCES events (id),
				PRIMARY KEY (tx, seq))`,
			`CREATE FUNCTION parley_feed_add() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF TG_TABLE_NAME = 'messages' THEN
					INSERT INTO feed (thread_id, message_id) VALUES (NEW.thread_id, NEW.id);
				ELSE
					INSERT INTO feed (thread_id, event_id) VALUES (NEW.thread_id, NEW.id);
				END IF;
				PERFORM pg_notify('parley_feed', '');
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER messages_feed AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION parley_feed_add()`,
			`CREATE TRIGGER events_feed AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION parley_feed_add()`,
			`CREATE INDEX feed_thread_idx ON feed (thread_id, tx, seq)`,
		}
		if kind == storage.SQLite {
			stmts = []string{
				`CREATE TABLE feed (
					seq INTEGER PRIMARY KEY,
					thread_id INTEGER NOT NULL REFERENCES threads (id),
					message_id INTEGER REFERENCES messages (id),
					event_id INTEGER REFERENCES events (id))`,
				`CREATE TRIGGER messages_feed AFTER INSERT ON messages BEGIN
					INSERT INTO feed (thread_id, message_id) VALUES (new.thread_id, new.id);
				END`,
				`CREATE TRIGGER events_feed AFTER INSERT ON events BEGIN
					INSERT INTO feed (thread_id, event_id) VALUES (new.thread_id, new.id);
				END`,
				`CREATE INDEX feed_thread_idx ON feed (thread_id, seq)`,
			}
		}
		stmts = append(stmts,
			// What was written before this migration, in the order it was written.
			`INSERT INTO feed (thread_id, message_id, event_id)
				SELECT thread_id, message_id, event_id FROM (
					SELECT thread_id, id AS message_id, NULL AS event_id, created_at AS at, 0 AS what FROM messages
					UNION ALL
					SELECT thread_id, NULL, id, at, 1 FROM events) AS written
				ORDER BY at, what, COALESCE(message_id, event_id)`,
		)
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
