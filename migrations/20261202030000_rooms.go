package migrations

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
)

// Rooms (PROTOCOL.md § 16): a room decides who hears a thread. Rooms nest one level (a room
// may have rooms inside it; those may not). Room 1, named general, holds every thread
// written before this migration; every thread belongs to exactly one room from now on
// (threads.room_id, NOT NULL, default 1). A token may be scoped to rooms: tokens.rooms holds
// the room ids it is scoped to, comma-separated, "" for a token that reaches every room.

type roomsRoom struct {
	bun.BaseModel `bun:"table:rooms"`

	ID          int64     `bun:"id,pk,autoincrement"`
	Name        string    `bun:"name,notnull,unique"`
	Title       string    `bun:"title,notnull"`
	Description string    `bun:"description,notnull"`
	ParentID    *int64    `bun:"parent_id"`
	Archived    bool      `bun:"archived,notnull"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
}

func init() {
	register(func(ctx context.Context, tx bun.Tx, kind storage.Kind) error {
		if _, err := tx.NewCreateTable().Model((*roomsRoom)(nil)).
			ForeignKey("(parent_id) REFERENCES rooms (id)").Exec(ctx); err != nil {
			return err
		}
		general := &roomsRoom{Name: "general", Title: "General", Description: "", CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
		if _, err := tx.NewInsert().Model(general).Returning("id").Exec(ctx); err != nil {
			return err
		}
		stmts := []string{
			`CREATE INDEX rooms_parent_idx ON rooms (parent_id)`,
			// Every thread so far is in general. SQLite adds no column that references
			// another table with a default other than NULL, so the reference is Postgres's.
			`ALTER TABLE threads ADD COLUMN room_id bigint NOT NULL DEFAULT 1`,
			`CREATE INDEX threads_room_activity_idx ON threads (room_id, updated_at, id)`,
			`CREATE INDEX threads_room_id_idx ON threads (room_id, id)`,
			`ALTER TABLE tokens ADD COLUMN rooms text NOT NULL DEFAULT ''`,
			// The room a move event moved its thread to.
			`ALTER TABLE events ADD COLUMN room_id bigint`,
		}
		if kind == storage.Postgres {
			stmts = append(stmts, `ALTER TABLE threads ADD CONSTRAINT threads_room_fk FOREIGN KEY (room_id) REFERENCES rooms (id)`)
		}
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}
