package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Driver errors come out of DB.Tx as the sentinel errors of errors.go, the same on both
// databases, so that no caller ever looks at a driver error.

func TestUniqueViolationIsErrAlreadyExists(t *testing.T) {
	cases := []struct {
		name  string
		first any
		again any
	}{
		{"users.name",
			&storage.User{Name: "ada", PasswordHash: "h1", CreatedAt: at(1)},
			&storage.User{Name: "ada", PasswordHash: "h2", CreatedAt: at(2)}},
		{"tokens.secret_hash",
			&storage.Token{Identity: "ainotes:a", SecretHash: "same", Rights: "read", CreatedAt: at(1)},
			&storage.Token{Identity: "ainotes:b", SecretHash: "same", Rights: "read", CreatedAt: at(2)}},
		{"settings.key (primary key)",
			&storage.Setting{Key: "session_key", Value: "one"},
			&storage.Setting{Key: "session_key", Value: "two"}},
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if err := insert(ctx, db, c.first); err != nil {
					t.Fatal(err)
				}
				err := insert(ctx, db, c.again)
				if !errors.Is(err, storage.ErrAlreadyExists) {
					t.Fatalf("second insert: err = %v, want ErrAlreadyExists", err)
				}
				if errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrNotFound) {
					t.Errorf("err = %v is more than one sentinel", err)
				}
			})
		}
	})
}

func TestOtherConstraintsAreNotErrAlreadyExists(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		// A message in a thread that does not exist: a foreign key, not a uniqueness, refuses it.
		orphan := &storage.Message{ThreadID: 4711, Kind: "ask", Identity: "ainotes:a", AuthorKind: "llm",
			Body: "?", CreatedAt: at(1)}
		err := insert(ctx, db, orphan)
		if err == nil {
			t.Fatal("a message in a missing thread was stored: foreign keys are not enforced")
		}
		for _, sentinel := range []error{storage.ErrAlreadyExists, storage.ErrNotFound, storage.ErrUnavailable} {
			if errors.Is(err, sentinel) {
				t.Errorf("foreign key violation: err = %v, is %v", err, sentinel)
			}
		}
	})
}

func TestMissingRowIsErrNotFound(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		err := db.Tx(context.Background(), func(ctx context.Context, tx bun.Tx) error {
			return tx.NewSelect().Model(&storage.Thread{}).Where("id = ?", 4711).Scan(ctx)
		})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestTxIsAllOrNothing(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		failure := errors.New("second write fails")
		err := db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewInsert().Model(&storage.Setting{Key: "a", Value: "1"}).Exec(ctx); err != nil {
				return err
			}
			return failure
		})
		if !errors.Is(err, failure) {
			t.Fatalf("Tx returned %v, want fn's error", err)
		}
		// Only this test's row counts: migrations keep settings of their own (the cursor key).
		n, err := db.NewSelect().Model((*storage.Setting)(nil)).Where("key = ?", "a").Count(ctx)
		if err != nil || n != 0 {
			t.Errorf("after a failed Tx: %d settings named a, %v; want the write rolled back", n, err)
		}
	})
}

func insert(ctx context.Context, db *storage.DB, model any) error {
	return db.Tx(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(model).Exec(ctx)
		return err
	})
}
