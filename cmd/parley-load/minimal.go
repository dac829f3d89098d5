package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The minimal forum post: the floor below the pgbench baseline. A forum post at its barest is
// three writes in one transaction — insert the message, update its thread (count, last
// message), insert the event — into three tables with a primary key each, the message's
// foreign key and its index by thread, and nothing else: no triggers, no search column, no
// feed, no write count, no inbox position. pgbench writes it with -M prepared, each client into
// a thread of its own, so that nothing waits for a row lock.
//
// The tables live in the schema "minimal" of the baselines' database, made anew for every run
// (setupMinimal). The send's own rows by pgbench (pgbench_script.go) over this mode's rate is
// what Parley's schema costs on top of the bare post; an HTTP send over it is the whole stack's
// price.

const minimalSchema = `
DROP SCHEMA IF EXISTS minimal CASCADE;
CREATE SCHEMA minimal;
CREATE TABLE minimal.threads (
	id bigint PRIMARY KEY,
	title text NOT NULL,
	message_count integer NOT NULL DEFAULT 0,
	last_message_id bigint,
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE minimal.messages (
	id bigserial PRIMARY KEY,
	thread_id bigint NOT NULL REFERENCES minimal.threads (id),
	author text NOT NULL,
	body text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON minimal.messages (thread_id, id);
CREATE TABLE minimal.events (
	id bigserial PRIMARY KEY,
	thread_id bigint NOT NULL,
	message_id bigint NOT NULL,
	act text NOT NULL,
	at timestamptz NOT NULL DEFAULT now()
);`

// setupMinimal makes the minimal schema in db with one thread per client (pgbench's client_id
// 0…clients-1 writes into thread client_id+1).
func setupMinimal(ctx context.Context, db string, clients int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		return fmt.Errorf("the minimal baseline's database: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, minimalSchema); err != nil {
		return fmt.Errorf("the minimal baseline's tables: %w", err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO minimal.threads (id, title) SELECT g, 'thread ' || g FROM generate_series(1, $1::int) g`, clients); err != nil {
		return fmt.Errorf("the minimal baseline's threads: %w", err)
	}
	return nil
}

// minimalScript is the minimal post as one pgbench transaction, with an answer's body of the
// load's agents.
func minimalScript() string {
	var b strings.Builder
	b.WriteString("-- The minimal forum post; written by parley-load (cmd/parley-load/minimal.go).\n")
	b.WriteString("\\set n random(1, 999999)\n")
	b.WriteString("BEGIN;\n")
	fmt.Fprintf(&b, "INSERT INTO minimal.messages (thread_id, author, body) VALUES (:client_id + 1, 'bench-' || :client_id, %s) RETURNING id AS m \\gset\n", bodySQL("answer"))
	b.WriteString("UPDATE minimal.threads SET message_count = message_count + 1, last_message_id = :m, updated_at = now() WHERE id = :client_id + 1;\n")
	b.WriteString("INSERT INTO minimal.events (thread_id, message_id, act) VALUES (:client_id + 1, :m, 'post');\n")
	b.WriteString("COMMIT;\n")
	return b.String()
}
