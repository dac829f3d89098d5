package migrations

import (
	"context"
	"strings"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Full-text search over message bodies (PROTOCOL.md § 13, Search), in each database's own
// index, so that a search costs what it finds and never reads every message.
//
// Both sides split text the same way: words are runs of letters and digits, lower-cased, never
// stemmed and with no stop words (Postgres's configuration 'simple', SQLite's tokenizer
// unicode61 keeping diacritics), so that one query finds the same messages on either.
// Postgres's parser would keep some runs with punctuation whole ('v1.2', 'a@b.com', 'x/y',
// '-5'), where unicode61 sees words; so Postgres indexes the body with every ASCII
// punctuation character turned into a space.
//
//   - Postgres: a generated tsvector column and a GIN index on it. The column is computed
//     by the database in the INSERT itself, whichever code path writes the message.
//   - SQLite: an FTS5 table with the messages as its external content, kept in step by
//     triggers, so that its rows are written in the message's own transaction.
//
// A thread's title is the first line of its first message, so the title is found through
// that message.
// asciiPunctuation is every ASCII punctuation character.
const asciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		stmts := []string{
			`ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS
				(to_tsvector('simple', translate(body, '` + strings.ReplaceAll(asciiPunctuation, "'", "''") + `', '` + strings.Repeat(" ", len(asciiPunctuation)) + `'))) STORED`,
			`CREATE INDEX messages_search_idx ON messages USING GIN (search)`,
		}
		if kind == storage.SQLite {
			stmts = []string{
				`CREATE VIRTUAL TABLE messages_fts USING fts5(body, content='messages', content_rowid='id',
					tokenize='unicode61 remove_diacritics 0')`,
				// Messages written before this migration.
				`INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')`,
				`CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
					INSERT INTO messages_fts (rowid, body) VALUES (new.id, new.body);
				END`,
				`CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
					INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', old.id, old.body);
				END`,
				`CREATE TRIGGER messages_fts_update AFTER UPDATE OF body ON messages BEGIN
					INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', old.id, old.body);
					INSERT INTO messages_fts (rowid, body) VALUES (new.id, new.body);
				END`,
			}
		}
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
