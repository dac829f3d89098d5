package storage_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// newRoom creates a room, inside parent when parent is not 0, and returns its id.
func newRoom(t *testing.T, db *storage.DB, name string, parent int64) int64 {
	t.Helper()
	r := &storage.Room{Name: name, Title: name}
	if parent != 0 {
		r.ParentID = &parent
	}
	if err := db.Read().CreateRoom(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// A token scoped to rooms is read with every room it reaches: the rooms named and the rooms
// inside them, in order of id, and nothing else; a token without rooms, or a human's, with
// none, and rooms that name no room reach nothing. A room opened inside a token's room is
// reached from the next read on.
func TestTokenReachesItsRoomsAndTheRoomsInside(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		team := newRoom(t, db, "team", 0)
		teamInner := newRoom(t, db, "team-inner", team)
		other := newRoom(t, db, "other", 0)
		otherInner := newRoom(t, db, "other-inner", other)
		ids := func(ids ...int64) string {
			var s []string
			for _, id := range ids {
				s = append(s, strconv.FormatInt(id, 10))
			}
			return strings.Join(s, ",")
		}
		for _, c := range []struct {
			name  string
			token storage.NewToken
			want  []int64
		}{
			{"every room", storage.NewToken{Identity: "ainotes:all"}, nil},
			{"a room and the room inside it", storage.NewToken{Identity: "ainotes:team", Rooms: ids(team)}, []int64{team, teamInner}},
			{"a room inside another only", storage.NewToken{Identity: "ainotes:inner", Rooms: ids(otherInner)}, []int64{otherInner}},
			{"two rooms", storage.NewToken{Identity: "ainotes:two", Rooms: ids(otherInner, team)}, []int64{team, teamInner, otherInner}},
			{"the general room", storage.NewToken{Identity: "ainotes:general", Rooms: ids(storage.GeneralRoom)}, []int64{storage.GeneralRoom}},
			{"no such room", storage.NewToken{Identity: "ainotes:none", Rooms: "999"}, []int64{}},
			{"a human", storage.NewToken{Identity: "human:ann", Human: true, Rooms: ids(team)}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				c.token.SecretHash, c.token.Rights = "hash-"+c.token.Identity, "read,write"
				if _, err := db.CreateToken(ctx, c.token); err != nil {
					t.Fatal(err)
				}
				for range 2 { // read, then (on Postgres) kept
					got, err := db.TokenByHash(ctx, c.token.SecretHash)
					if err != nil {
						t.Fatal(err)
					}
					if (got.Reached == nil) != (c.want == nil) || !slices.Equal(got.Reached, c.want) {
						t.Fatalf("Reached = %#v, want %#v", got.Reached, c.want)
					}
				}
			})
		}
		later := newRoom(t, db, "team-later", team)
		db.TokenRoomsChanged()
		got, err := db.TokenByHash(ctx, "hash-ainotes:team")
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{team, teamInner, later}; !slices.Equal(got.Reached, want) {
			t.Fatalf("after a room was opened inside the token's room: Reached = %v, want %v", got.Reached, want)
		}
	})
}

// Two instances on one Postgres: a room opened inside a token's room through the second
// instance is reached by the token on the first, which keeps the token it verified with its
// rooms, as soon as the announcement arrives.
func TestTokenRoomsAcrossInstances(t *testing.T) {
	ctx := context.Background()
	first, second := twoInstances(t)
	team := newRoom(t, second, "team", 0)
	if _, err := second.CreateToken(ctx, storage.NewToken{Identity: "ainotes:team", SecretHash: "hash-team",
		Rights: "read", Rooms: strconv.FormatInt(team, 10)}); err != nil {
		t.Fatal(err)
	}
	reached := func() []int64 {
		tok, err := first.TokenByHash(ctx, "hash-team")
		if err != nil {
			t.Fatal(err)
		}
		return tok.Reached
	}
	start := time.Now()
	for !storage.TokenCacheServing(first) {
		reached()
		if time.Since(start) > 10*time.Second {
			t.Fatal("the first instance did not listen for token changes within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := reached(); !slices.Equal(got, []int64{team}) { // kept from now on
		t.Fatalf("Reached = %v, want [%d]", got, team)
	}
	inner := newRoom(t, second, "team-inner", team)
	want := []int64{team, inner}
	for start := time.Now(); !slices.Equal(reached(), want); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("10 s after a room was opened inside the token's room, the first instance still reads Reached = %v, want %v", reached(), want)
		}
	}
}
