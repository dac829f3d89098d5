package storage_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Round trips of every model in models.go through both databases: the live models and the
// schema the migrations build must agree column by column.

// at is a stored time: UTC, with microseconds, what both databases keep.
func at(minute int) time.Time {
	return time.Date(2026, 12, 1, 6, minute, 7, 123456000, time.UTC)
}

func ptr[T any](v T) *T { return &v }

// model describes the round trip of one model type M.
type model[M any] struct {
	// full has every column set (nullable ones non-NULL), except an autoincrement id.
	full func() *M
	// update changes every column but the primary key, some nullable ones to NULL.
	update func(*M)
	// sparse has every nullable column NULL; nil for a model without nullable columns.
	sparse func() *M
	// key is a new, empty M with only the primary key of m.
	key func(m *M) *M
}

// roundTrip inserts, reads, updates and reads again, and inserts and reads the sparse form.
func roundTrip[M any](t *testing.T, db *storage.DB, m model[M]) {
	t.Helper()
	ctx := context.Background()
	full := m.full()
	requireColumns(t, full, func(f reflect.StructField, v reflect.Value) bool {
		return isAutoincrement(f) || !v.IsZero()
	}, "is zero in full: set every column, so that a column the database loses shows")
	if _, err := db.NewInsert().Model(full).Exec(ctx); err != nil {
		t.Fatalf("insert %T: %v", full, err)
	}
	requireColumns(t, full, func(f reflect.StructField, v reflect.Value) bool {
		return !isAutoincrement(f) || !v.IsZero()
	}, "was not set by the insert")
	assertStored(t, db, m.key(full), full)

	before := reflect.ValueOf(*full)
	m.update(full)
	requireColumns(t, full, func(f reflect.StructField, v reflect.Value) bool {
		return isPK(f) || !reflect.DeepEqual(v.Interface(), before.FieldByIndex(f.Index).Interface())
	}, "is not changed by update: change every column, so that an update the database loses shows")
	if _, err := db.NewUpdate().Model(full).WherePK().Exec(ctx); err != nil {
		t.Fatalf("update %T: %v", full, err)
	}
	assertStored(t, db, m.key(full), full)

	if m.sparse == nil {
		return
	}
	sparse := m.sparse()
	requireColumns(t, sparse, func(f reflect.StructField, v reflect.Value) bool {
		return v.Kind() != reflect.Pointer || v.IsNil()
	}, "is not NULL in sparse")
	if _, err := db.NewInsert().Model(sparse).Exec(ctx); err != nil {
		t.Fatalf("insert sparse %T: %v", sparse, err)
	}
	assertStored(t, db, m.key(sparse), sparse)
}

// assertStored reads the row of key, a model holding only the primary key, and compares it
// with want. Times compare as instants (time.Time.Equal).
func assertStored[M any](t *testing.T, db *storage.DB, key, want *M) {
	t.Helper()
	if err := db.NewSelect().Model(key).WherePK().Scan(context.Background()); err != nil {
		t.Fatalf("select %T: %v", key, err)
	}
	if diff := cmp.Diff(want, key); diff != "" {
		t.Errorf("%T read back differs (-written +read):\n%s", want, diff)
	}
}

// requireColumns fails unless ok holds for every column field of the model.
func requireColumns(t *testing.T, modelPtr any, ok func(reflect.StructField, reflect.Value) bool, problem string) {
	t.Helper()
	v := reflect.ValueOf(modelPtr).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Type == reflect.TypeFor[bun.BaseModel]() || !f.IsExported() || f.Tag.Get("bun") == "-" {
			continue
		}
		if !ok(f, v.FieldByIndex(f.Index)) {
			t.Fatalf("%s.%s %s", v.Type().Name(), f.Name, problem)
		}
	}
}

func bunOptions(f reflect.StructField) []string { return strings.Split(f.Tag.Get("bun"), ",")[1:] }

func hasOption(f reflect.StructField, option string) bool {
	for _, o := range bunOptions(f) {
		if o == option {
			return true
		}
	}
	return false
}

func isPK(f reflect.StructField) bool            { return hasOption(f, "pk") }
func isAutoincrement(f reflect.StructField) bool { return hasOption(f, "autoincrement") }

func TestModelsRoundTrip(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Run("Token", func(t *testing.T) {
			roundTrip(t, db, model[storage.Token]{
				full: func() *storage.Token {
					return &storage.Token{Identity: "ainotes:alpha", Human: true, SecretHash: "hash-1",
						Rights: "read,write", Label: ptr("laptop"), CreatedAt: at(1), RevokedAt: ptr(at(2)), Rooms: "1"}
				},
				update: func(tok *storage.Token) {
					tok.Identity, tok.Human, tok.SecretHash, tok.Rights = "human:ada", false, "hash-2", "read"
					tok.Label, tok.CreatedAt, tok.RevokedAt, tok.Rooms = nil, at(3), ptr(at(4)), "2,3"
				},
				sparse: func() *storage.Token {
					return &storage.Token{Identity: "ainotes:beta", SecretHash: "hash-3", Rights: "read", CreatedAt: at(5)}
				},
				key: func(tok *storage.Token) *storage.Token { return &storage.Token{ID: tok.ID} },
			})
		})

		t.Run("User", func(t *testing.T) {
			roundTrip(t, db, model[storage.User]{
				full: func() *storage.User {
					return &storage.User{Name: "ada", PasswordHash: "$argon2id$v=19$a", Admin: true, CreatedAt: at(1)}
				},
				update: func(u *storage.User) {
					u.Name, u.PasswordHash, u.Admin, u.CreatedAt = "grace", "$argon2id$v=19$b", false, at(2)
				},
				key: func(u *storage.User) *storage.User { return &storage.User{ID: u.ID} },
			})
		})

		t.Run("Setting", func(t *testing.T) {
			roundTrip(t, db, model[storage.Setting]{
				full:   func() *storage.Setting { return &storage.Setting{Key: "session_key", Value: "c2VjcmV0"} },
				update: func(s *storage.Setting) { s.Value = "bmV3" },
				key:    func(s *storage.Setting) *storage.Setting { return &storage.Setting{Key: s.Key} },
			})
		})

		t.Run("Room", func(t *testing.T) {
			roundTrip(t, db, model[storage.Room]{
				full: func() *storage.Room {
					return &storage.Room{Name: "research", Title: "Research «R»", Description: "what we find out",
						ParentID: ptr(storage.GeneralRoom), Archived: true, CreatedAt: at(1)}
				},
				update: func(r *storage.Room) {
					r.Name, r.Title, r.Description, r.ParentID, r.Archived, r.CreatedAt = "ops", "Ops", "", nil, false, at(2)
				},
				sparse: func() *storage.Room { return &storage.Room{Name: "bare", CreatedAt: at(3)} },
				key:    func(r *storage.Room) *storage.Room { return &storage.Room{ID: r.ID} },
			})
		})

		// Threads, messages and events refer to each other; these rows are what they refer to.
		ctx := context.Background()
		otherRoom := &storage.Room{Name: "other-room", Title: "Other", CreatedAt: at(1)}
		if _, err := db.NewInsert().Model(otherRoom).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		threads := []*storage.Thread{sparseThread("first"), sparseThread("second")}
		for _, th := range threads {
			if _, err := db.NewInsert().Model(th).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		roots := []*storage.Message{sparseMessage(threads[0].ID), sparseMessage(threads[1].ID)}
		for _, m := range roots {
			if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		firstEvent := sparseEvent(threads[0].ID)
		if _, err := db.NewInsert().Model(firstEvent).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		t.Run("Thread", func(t *testing.T) {
			roundTrip(t, db, model[storage.Thread]{
				full: func() *storage.Thread {
					return &storage.Thread{Title: "Is the cache coherent?", TitleHidden: true, State: "open", StateOrigin: "auto",
						StateConfirmedAt: ptr(at(1)), ConfirmedState: "open", StateEventID: ptr(firstEvent.ID),
						Creator: "ainotes:alpha", CreatorExtension: "ext", RootMessageID: ptr(roots[0].ID),
						LastMessageID: ptr(roots[1].ID), MessageCount: 2,
						AwaitingMode: storage.AwaitingTo, AwaitingIdentity: "ainotes:beta", AwaitingExtension: "x",
						AwaitingSetBy: ptr(roots[0].ID), InboxTo: ptr("ainotes:beta"), InboxTx: 9, InboxSeq: 3,
						CreatedAt: at(2), UpdatedAt: at(3), RoomID: storage.GeneralRoom}
				},
				update: func(th *storage.Thread) {
					th.Title, th.State, th.StateOrigin, th.ConfirmedState = "Retitled", "answered", "human", "answered"
					th.TitleHidden = false
					th.StateConfirmedAt, th.StateEventID = nil, nil
					th.Creator, th.CreatorExtension = "ainotes:gamma", ""
					th.RootMessageID, th.LastMessageID, th.MessageCount = ptr(roots[1].ID), nil, 7
					th.AwaitingMode, th.AwaitingIdentity, th.AwaitingExtension = storage.AwaitingAny, "", ""
					th.AwaitingSetBy, th.InboxTo, th.InboxTx, th.InboxSeq = ptr(roots[1].ID), ptr(storage.InboxAny), 10, 4
					th.CreatedAt, th.UpdatedAt, th.RoomID = at(4), at(5), otherRoom.ID
				},
				sparse: func() *storage.Thread { return sparseThread("sparse") },
				key:    func(th *storage.Thread) *storage.Thread { return &storage.Thread{ID: th.ID} },
			})
		})

		t.Run("Message", func(t *testing.T) {
			roundTrip(t, db, model[storage.Message]{
				full: func() *storage.Message {
					return &storage.Message{ThreadID: threads[0].ID, ParentID: ptr(roots[0].ID), Depth: 1,
						AskID: ptr(roots[0].ID), Kind: "answer", Identity: "ainotes:beta", Extension: "e",
						AuthorKind: "llm", Body: "Ja – it is. «quoted» 💬\nsecond line", ProvenanceModel: ptr("model-x"),
						ProvenanceClient: ptr("client-y"), CreatedAt: at(1),
						AwaitingMode: storage.AwaitingTo, AwaitingIdentity: "ainotes:alpha", AwaitingExtension: "x",
						AwaitingSetBy: ptr(roots[0].ID), HiddenAt: ptr(at(3)), HiddenBy: ptr("human:ada"),
						HiddenReason: ptr("an injected instruction"), HiddenReasonPublic: true}
				},
				update: func(m *storage.Message) {
					m.ThreadID, m.ParentID, m.Depth, m.AskID = threads[1].ID, ptr(roots[1].ID), 2, nil
					m.Kind, m.Identity, m.Extension, m.AuthorKind = "note", "human:ada", "", "human"
					m.Body, m.ProvenanceModel, m.ProvenanceClient, m.CreatedAt = "edited", nil, ptr("client-z"), at(2)
					m.AwaitingMode, m.AwaitingIdentity, m.AwaitingExtension = storage.AwaitingNone, "", ""
					m.AwaitingSetBy = nil
					m.HiddenAt, m.HiddenBy, m.HiddenReason, m.HiddenReasonPublic = nil, nil, nil, false
				},
				sparse: func() *storage.Message { return sparseMessage(threads[0].ID) },
				key:    func(m *storage.Message) *storage.Message { return &storage.Message{ID: m.ID} },
			})
		})

		t.Run("Event", func(t *testing.T) {
			roundTrip(t, db, model[storage.Event]{
				full: func() *storage.Event {
					return &storage.Event{ThreadID: threads[0].ID, Subject: "thread", Act: "state", FromState: ptr("open"),
						ToState: "answered", Origin: "human", ActorIdentity: "human:ada", ActorExtension: "e",
						Label: "done", MessageID: ptr(roots[0].ID), Confirmed: true, ConfirmedAt: ptr(at(1)),
						ConfirmsEventID: ptr(firstEvent.ID), At: at(2), RoomID: ptr(storage.GeneralRoom),
						StanceID: ptr(int64(7)), CauseClaimID: ptr(int64(3))}
				},
				update: func(e *storage.Event) {
					e.ThreadID, e.Subject, e.Act, e.FromState = threads[1].ID, "claim", "mark", nil
					e.ToState, e.Origin, e.ActorIdentity, e.ActorExtension = "closed", "auto", "ainotes:beta", ""
					e.Label, e.MessageID, e.Confirmed, e.ConfirmedAt = "", ptr(roots[1].ID), false, nil
					e.ConfirmsEventID, e.At, e.RoomID = nil, at(3), nil
					e.StanceID, e.CauseClaimID = ptr(int64(8)), nil
				},
				sparse: func() *storage.Event { return sparseEvent(threads[1].ID) },
				key:    func(e *storage.Event) *storage.Event { return &storage.Event{ID: e.ID} },
			})
		})
	})
}

func sparseThread(title string) *storage.Thread {
	return &storage.Thread{Title: title, State: "open", StateOrigin: "auto", ConfirmedState: "open",
		Creator: "ainotes:alpha", CreatedAt: at(10), UpdatedAt: at(11), RoomID: storage.GeneralRoom}
}

func sparseMessage(threadID int64) *storage.Message {
	return &storage.Message{ThreadID: threadID, Kind: "ask", Identity: "ainotes:alpha", AuthorKind: "llm",
		Body: "Question?", CreatedAt: at(12)}
}

func sparseEvent(threadID int64) *storage.Event {
	return &storage.Event{ThreadID: threadID, Subject: "thread", Act: "state", ToState: "open", Origin: "auto",
		ActorIdentity: "ainotes:alpha", At: at(13)}
}

// TestTimesKeepTheirInstantToTheMicrosecond: both databases keep microseconds, whatever zone a
// time is written in; finer digits are cut off, the same way on both.
func TestTimesKeepTheirInstantToTheMicrosecond(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		kolkata := time.FixedZone("IST", 5*3600+1800)
		for i, written := range []time.Time{
			at(0),
			time.Date(2026, 12, 1, 11, 30, 7, 123456000, kolkata),
			time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
			time.Date(2026, 12, 1, 6, 0, 7, 123456789, time.UTC), // nanoseconds: cut to …456
		} {
			u := &storage.User{Name: "u" + string(rune('a'+i)), PasswordHash: "h", CreatedAt: written}
			if _, err := db.NewInsert().Model(u).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			read := &storage.User{ID: u.ID}
			if err := db.NewSelect().Model(read).WherePK().Scan(ctx); err != nil {
				t.Fatal(err)
			}
			want := written.UTC().Truncate(time.Microsecond)
			if got := read.CreatedAt.UTC(); !got.Equal(want) || got.Nanosecond() != want.Nanosecond() {
				t.Errorf("wrote %v, read back %v, want %v", written, read.CreatedAt, want)
			}
		}
	})
}
