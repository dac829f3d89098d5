package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// On SQLite, the search index gains the room of each message's thread (PROTOCOL.md § 16), as
// a second column holding one word, r<room id>, so that a search within rooms intersects the
// word's matches with the rooms' inside the index, instead of checking the room of every
// message in the forum that holds the word: a common word's search in a room costs what the
// room holds. The column weighs nothing in the ranking (storage's Search), and a search for
// words reads the body column only.
//
// The index reads its content from a view that joins each message to its thread, and the
// triggers keep it right: a message written, changed or deleted, and a thread moved to
// another room, which re-indexes the thread's messages under the new room in the move's own
// transaction. Postgres needs none of this: its planner reaches the room's messages through
// the threads' room index, and its search stays where it was.
func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if kind != storage.SQLite {
			return nil
		}
		const roomOf = `(SELECT 'r' || room_id FROM threads WHERE id = %s.thread_id)`
		return execEach(ctx, tx,
			`DROP TRIGGER messages_fts_insert`,
			`DROP TRIGGER messages_fts_delete`,
			`DROP TRIGGER messages_fts_update`,
			`DROP TABLE messages_fts`,
			`CREATE VIEW messages_fts_content AS
				SELECT m.id AS id, m.body AS body, 'r' || t.room_id AS room
				FROM messages AS m JOIN threads AS t ON t.id = m.thread_id`,
			`CREATE VIRTUAL TABLE messages_fts USING fts5(body, room, content='messages_fts_content',
				content_rowid='id', tokenize='unicode61 remove_diacritics 0')`,
			`INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')`,
			`CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
				INSERT INTO messages_fts (rowid, body, room)
					VALUES (new.id, new.body, `+fmt.Sprintf(roomOf, "new")+`);
			END`,
			`CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
				INSERT INTO messages_fts (messages_fts, rowid, body, room)
					VALUES ('delete', old.id, old.body, `+fmt.Sprintf(roomOf, "old")+`);
			END`,
			`CREATE TRIGGER messages_fts_update AFTER UPDATE OF body, thread_id ON messages BEGIN
				INSERT INTO messages_fts (messages_fts, rowid, body, room)
					VALUES ('delete', old.id, old.body, `+fmt.Sprintf(roomOf, "old")+`);
				INSERT INTO messages_fts (rowid, body, room)
					VALUES (new.id, new.body, `+fmt.Sprintf(roomOf, "new")+`);
			END`,
			`CREATE TRIGGER messages_fts_move AFTER UPDATE OF room_id ON threads
				WHEN new.room_id IS NOT old.room_id BEGIN
				INSERT INTO messages_fts (messages_fts, rowid, body, room)
					SELECT 'delete', id, body, 'r' || old.room_id FROM messages WHERE thread_id = old.id;
				INSERT INTO messages_fts (rowid, body, room)
					SELECT id, body, 'r' || new.room_id FROM messages WHERE thread_id = new.id;
			END`,
		)
	})
}
