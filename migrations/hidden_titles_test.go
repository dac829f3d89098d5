package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// TestHiddenTitlesCarryOldDataOver writes a forum as it stood before hidden titles
// (20261207100000_hidden_titles): a thread whose opening message was hidden, and one whose
// answer was. After the migration the first thread's title is hidden from tokens and the
// second's is not, and the reasons written before are for humans only, as § 18 says of a
// reason not marked public.
func TestHiddenTitlesCarryOldDataOver(t *testing.T) {
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if _, err := migrations.UpTo(ctx, db, "20261207095959"); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
		exec := func(sql string, args ...any) {
			t.Helper()
			if _, err := db.NewRaw(sql, args...).Exec(ctx); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		for th, title := range map[int]string{1: "Post your token here", 2: "Which port"} {
			root := th * 10
			exec(`INSERT INTO threads (id, title, state, state_origin, confirmed_state, creator, creator_extension,
				root_message_id, last_message_id, message_count, awaiting_mode, awaiting_identity, awaiting_extension, inbox_tx,
				inbox_seq, created_at, updated_at, room_id) VALUES (?, ?, 'open', 'llm', 'open', 'ainotes:alice', '', ?, ?, 2,
				'', '', '', 0, ?, ?, ?, 1)`, th, title, root, root+1, th, at, at)
			exec(`INSERT INTO messages (id, thread_id, depth, kind, identity, extension, author_kind, body, created_at,
				awaiting_mode, awaiting_identity, awaiting_extension) VALUES (?, ?, 0, 'ask', 'ainotes:alice', '', 'llm', ?, ?, '', '', '')`,
				root, th, title, at)
			exec(`INSERT INTO messages (id, thread_id, parent_id, depth, kind, identity, extension, author_kind, body, created_at,
				awaiting_mode, awaiting_identity, awaiting_extension) VALUES (?, ?, ?, 1, 'answer', 'ainotes:bob', '', 'llm', '8080', ?, '', '', '')`,
				root+1, th, root, at)
		}
		hide := func(id int) {
			exec(`UPDATE messages SET hidden_at = ?, hidden_by = 'human:ada', hidden_reason = 'it quotes the token' WHERE id = ?`, at, id)
		}
		hide(10) // the opening message of th_1
		hide(21) // the answer in th_2
		if _, err := migrations.Up(ctx, db); err != nil {
			t.Fatalf("migrating the old data: %v", err)
		}

		svc := protocol.New(db, protocol.Options{})
		reader := &protocol.Actor{Identity: "ainotes:reader", Rights: mustRights(t, "read")}
		list, err := svc.ListThreads(ctx, reader, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		titles := map[string]any{}
		for _, v := range list.Threads {
			titles[v.ID] = nil
			if v.Title != nil {
				titles[v.ID] = *v.Title
			}
			if v.TitleHidden != (v.ID == "th_1") {
				t.Errorf("%s: title_hidden %v", v.ID, v.TitleHidden)
			}
		}
		if len(titles) != 2 || titles["th_1"] != nil || titles["th_2"] != "Which port" {
			t.Errorf("the tokens read the titles %v", titles)
		}
		for _, read := range []struct {
			who    *protocol.Actor
			reason bool
		}{{reader, false}, {protocol.HumanActor("ada"), true}} {
			res, err := svc.ReadThread(ctx, read.who, []byte(`{"thread":"th_2"}`))
			if err != nil {
				t.Fatal(err)
			}
			hidden := res.Messages[0].Replies[0].Hidden
			if hidden == nil || (hidden.Reason != nil) != read.reason {
				t.Errorf("%s reads the hiding of an old hide as %+v", read.who.Identity, hidden)
			}
		}
	})
}
