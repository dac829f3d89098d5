package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// NewToken is what the caller decides about a token; the database adds its id and the time.
type NewToken struct {
	Identity   string  // <realm>:<handle> or human:<name>
	Human      bool    // a personal token that acts as the human Identity
	SecretHash string  // protocol.HashTokenSecret of the secret; the secret itself is never stored
	Rights     string  // the stored form of protocol.Rights: "read,write"
	Label      *string // the moderation label; nil for none
	Rooms      string  // the ids of the rooms the token is scoped to, "2,5"; "" for every room
}

// CreateToken stores a new token. ErrAlreadyExists means the hash is taken, which for a
// secret with 256 bits of randomness only happens when the same secret is stored twice.
func (db *DB) CreateToken(ctx context.Context, nt NewToken) (*Token, error) {
	t := &Token{
		Identity:   nt.Identity,
		Human:      nt.Human,
		SecretHash: nt.SecretHash,
		Rights:     nt.Rights,
		Label:      nt.Label,
		Rooms:      nt.Rooms,
		CreatedAt:  Now(),
	}
	if _, err := db.NewInsert().Model(t).Returning("id").Exec(ctx); err != nil {
		return nil, translate(err)
	}
	return t, nil
}

// TokenByHash finds the live token whose secret hashes to hash. A token that does not exist
// is ErrNotFound; one that was revoked is ErrRevoked (wrapped with its id for the logs).
//
// The lookup goes through the unique index, not a constant-time scan: what an attacker could
// learn from its timing is how a hash they chose compares with stored hashes, and without a
// preimage of SHA-256 that tells nothing about any secret.
//
// On Postgres a live agent token verified before may come from the instance's memory instead
// (tokenCache): a revocation reaches it when its announcement does, and every agent write
// checks its token again in its own transaction (WriteCount.Token). SQLite reads it every
// time.
//
// A token scoped to rooms comes with the rooms it reaches (Token.Reached), read once with
// it: kept in the cache with the token, they are right as long as the token is, since a
// room's creation or change is announced as a token's change is (the rooms_announce
// trigger), and a room's parent never changes.
func (db *DB) TokenByHash(ctx context.Context, hash string) (*Token, error) {
	t := new(Token)
	var err error
	if db.kind == Postgres {
		db.changes.startListening() // the cache serves once the instance listens
		now := time.Now()
		cached, ok, gen := db.tokens.get(hash, now)
		if ok {
			return &cached, nil
		}
		err = db.selectPrepared(ctx, db.DB.DB, pgTokenByHash, t, hash) // reply_pg.go
		if err == nil {
			err = db.readReached(ctx, t)
		}
		if err == nil {
			db.tokens.put(t, gen, now)
		}
	} else {
		err = db.sqliteTokenByHash(ctx, t, hash) // hotpath_sqlite.go, with the rooms reached
	}
	if err != nil {
		return nil, translate(err)
	}
	if t.RevokedAt != nil {
		return nil, fmt.Errorf("%w: token %d (%s) since %s", ErrRevoked, t.ID, t.Identity,
			t.RevokedAt.UTC().Format(time.RFC3339))
	}
	return t, nil
}

// TokenRoomsChanged forgets the tokens this instance keeps in memory, with the rooms each
// reaches, after it created a room: the announcement of the rooms_announce trigger does it
// for every instance, this does it for this one before its next request.
func (db *DB) TokenRoomsChanged() { db.tokens.drop() }

// Tokens lists every token, revoked ones included, oldest first.
func (db *DB) Tokens(ctx context.Context) ([]Token, error) {
	tokens := []Token{}
	if err := db.NewSelect().Model(&tokens).Order("id").Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return tokens, nil
}

// RevokeToken revokes the token with the given id from now on. Revoking a token that is
// already revoked succeeds and keeps the first revocation time, so that a script may repeat
// a revocation without harm and the record still tells when the token stopped working. An
// unknown id is ErrNotFound.
func (db *DB) RevokeToken(ctx context.Context, id int64) error {
	res, err := db.NewUpdate().Model((*Token)(nil)).
		Set("revoked_at = COALESCE(revoked_at, ?)", Now()).
		Where("id = ?", id).
		Exec(ctx)
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no token with id %d", ErrNotFound, id)
	}
	// This instance need not wait for the announcement that tells the others.
	db.tokens.drop()
	return nil
}

// readReached fills t.Reached for a token scoped to rooms: the rooms named and the rooms
// inside them, in order of id, read as every scope's rooms are (resolvedScope). Postgres
// reads it only when the token is not in its cache; SQLite reads it in the token's own
// statement (sqliteTokenByHash).
func (db *DB) readReached(ctx context.Context, t *Token) error {
	t.Reached = nil
	if t.Human || t.Rooms == "" {
		return nil
	}
	s, err := db.Read().In(Scope{Reach: TokenRoomIDs(t.Rooms)}).resolvedScope(ctx)
	if err != nil {
		return err
	}
	t.Reached = s.Rooms // rooms that name no room reach nothing, as ScopeOf reads them
	return nil
}

// TokenRoomIDs reads the stored form of a token's rooms ("2,5"): nil for "", every room;
// an id that is not a positive number is left out, so rooms that name none reach nothing.
func TokenRoomIDs(stored string) []int64 {
	if stored == "" {
		return nil
	}
	out := []int64{}
	for _, part := range strings.Split(stored, ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
