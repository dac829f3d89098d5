package migrations_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// TestRecordHistoryCarriesOldDataOver writes a forum as it stood before the append-only
// record (20261202010100_record_history): claims superseded by a newer one (their
// superseded_by, the only record of supersession then), claim events that name neither
// stance nor claim, a claim verified by two verifiers with no quorum recorded. After the
// remaining migrations, it reads right: the supersession both ways, every stance event names
// its stance, every supersede event the superseding claim, the seal keeps a quorum of two
// under a limit of three, a later mark rewrites none of it, and the export is whole.
func TestRecordHistoryCarriesOldDataOver(t *testing.T) {
	eachEmpty(t, func(t *testing.T, _ string, db *storage.DB) {
		ctx := context.Background()
		if _, err := migrations.UpTo(ctx, db, "20261202010000"); err != nil {
			t.Fatal(err)
		}
		at := func(s int) time.Time { return time.Date(2026, 12, 1, 10, 0, s, 0, time.UTC) }
		const evidence = `[{"kind":"hash","ref":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}]`
		exec := func(sql string, args ...any) {
			t.Helper()
			if _, err := db.NewRaw(sql, args...).Exec(ctx); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		exec(`INSERT INTO threads (id, title, state, state_origin, confirmed_state, state_event_id, creator, creator_extension,
			root_message_id, last_message_id, message_count, awaiting_mode, awaiting_identity, awaiting_extension, inbox_tx,
			inbox_seq, created_at, updated_at) VALUES (1, 'Which port', 'open', 'llm', 'open', 1, 'ainotes:alice', '', 1, 1, 1,
			'', '', '', 0, 1, ?, ?)`, at(0), at(0))
		exec(`INSERT INTO messages (id, thread_id, depth, kind, identity, extension, author_kind, body, created_at,
			awaiting_mode, awaiting_identity, awaiting_extension) VALUES (1, 1, 0, 'ask', 'ainotes:alice', '', 'llm',
			'Which port', ?, '', '', '')`, at(0))
		event := func(id int, subject, act string, from *string, to, actor string, s int, message *int) {
			t.Helper()
			exec(`INSERT INTO events (id, thread_id, subject, act, from_state, to_state, origin, actor_identity, actor_extension,
				label, message_id, confirmed, at) VALUES (?, 1, ?, ?, ?, ?, 'llm', ?, '', ?, ?, ?, ?)`,
				id, subject, act, from, to, actor, actor, message, false, at(s))
		}
		str := func(s string) *string { return &s }
		one := 1
		event(1, "th_1", "ask", nil, "open", "ainotes:alice", 0, &one)
		claim := func(id int, state string, supersededBy *int, s int) {
			t.Helper()
			exec(`INSERT INTO claims (id, thread_id, anchor_id, statement, identity, extension, author_kind, state, state_origin,
				evidence, superseded_by, created_at, updated_at) VALUES (?, 1, 1, ?, 'ainotes:alice', '', 'llm', ?, 'llm', ?, ?, ?, ?)`,
				id, "Port 808"+string(rune('0'+id)), state, evidence, supersededBy, at(s), at(s))
		}
		three := 3
		claim(3, "unverified", nil, 3) // first, for the others' superseded_by
		claim(1, "superseded", &three, 1)
		claim(2, "superseded", &three, 2)
		claim(4, "verified", nil, 4)
		for i, c := range []string{"cl_1", "cl_2", "cl_3", "cl_4"} {
			event(2+i, c, "assert", nil, "unverified", "ainotes:alice", 1+i, nil)
		}
		// The supersession as the old code wrote it: the event names only its subject.
		event(6, "cl_1", "supersede", str("unverified"), "superseded", "ainotes:alice", 3, nil)
		event(7, "cl_2", "supersede", str("unverified"), "superseded", "ainotes:alice", 3, nil)
		stance := func(id int, kind, identity string, s int) {
			t.Helper()
			exec(`INSERT INTO claim_stances (id, claim_id, kind, identity, extension, author_kind, evidence, created_at)
				VALUES (?, 4, ?, ?, '', 'llm', ?, ?)`, id, kind, identity, evidence, at(s))
		}
		stance(1, "attest", "ainotes:bob", 10)
		stance(2, "verify", "ainotes:vera", 11)
		stance(3, "verify", "ainotes:vic", 12)
		event(8, "cl_4", "attest", str("unverified"), "supported", "ainotes:bob", 10, nil)
		event(9, "cl_4", "verify", str("supported"), "supported", "ainotes:vera", 11, nil)
		event(10, "cl_4", "verify", str("supported"), "verified", "ainotes:vic", 12, nil)
		if db.Kind() == storage.Postgres {
			// The rows above took their ids by hand: the sequences go on after them.
			for _, table := range []string{"threads", "messages", "events", "claims", "claim_stances"} {
				exec(`SELECT setval(pg_get_serial_sequence('` + table + `', 'id'), (SELECT max(id) FROM ` + table + `))`)
			}
		}

		if _, err := migrations.Up(ctx, db); err != nil {
			t.Fatalf("migrating the old data: %v", err)
		}
		limits := protocol.DefaultLimits()
		limits.VerifyQuorum = 3
		svc := protocol.New(db, protocol.Options{Limits: limits})
		reader := &protocol.Actor{Identity: "ainotes:reader", Rights: mustRights(t, "read")}
		read := func(id string) *protocol.ClaimView {
			t.Helper()
			res, err := svc.ReadClaim(ctx, reader, []byte(`{"claim":"`+id+`"}`))
			if err != nil {
				t.Fatalf("reading %s: %v", id, err)
			}
			return res.Claim
		}
		checkSupersession := func(when string) {
			t.Helper()
			if c := read("cl_3"); !slices.Equal(c.Supersedes, []string{"cl_1", "cl_2"}) {
				t.Errorf("%s: cl_3 supersedes %v, want [cl_1 cl_2]", when, c.Supersedes)
			}
			for _, id := range []string{"cl_1", "cl_2"} {
				if c := read(id); c.SupersededBy == nil || *c.SupersededBy != "cl_3" {
					t.Errorf("%s: %s superseded_by %v, want cl_3", when, id, c.SupersededBy)
				}
			}
		}
		checkSupersession("after the migration")
		sealed := read("cl_4")
		if sealed.State != "verified" || sealed.Quorum.Of != 2 || sealed.Quorum.Verifiers != 2 {
			t.Errorf("cl_4, verified by two before the quorum was recorded, reads %s %+v under a limit of 3", sealed.State, sealed.Quorum)
		}
		if ids := []string{sealed.Attestations[0].ID, sealed.Verifications[0].ID, sealed.Verifications[1].ID}; !slices.Equal(ids, []string{"att_1", "ver_2", "ver_3"}) {
			t.Errorf("cl_4's stances are %v", ids)
		}
		evs, err := svc.ReadEvents(ctx, reader, []byte(`{"thread":"th_1"}`))
		if err != nil {
			t.Fatal(err)
		}
		causes := map[string]string{}
		for _, ev := range evs.Events {
			switch {
			case ev.Stance != nil:
				causes[ev.ID] = *ev.Stance
			case ev.Claim != nil:
				causes[ev.ID] = *ev.Claim
			}
		}
		want := map[string]string{"ev_6": "cl_3", "ev_7": "cl_3", "ev_8": "att_1", "ev_9": "ver_2", "ev_10": "ver_3"}
		if !maps(causes, want) {
			t.Errorf("the old events name causes %v, want %v", causes, want)
		}

		// A mark now, as the human's in the issue: the supersession stays.
		if _, err := svc.MarkClaim(ctx, protocol.HumanActor("ada"), []byte(`{"claim":"cl_1","state":"supported"}`)); err != nil {
			t.Fatal(err)
		}
		checkSupersession("after a mark of cl_1")

		// The export of the old forum is whole: every claim a node with its assert event.
		var buf strings.Builder
		if err := svc.WriteExport(ctx, 0, "json", &buf); err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Nodes  []struct{ ID, Type string }
			Events []struct{ Subject, Act string }
			Claims []struct{ ID string }
		}
		if err := json.Unmarshal([]byte(buf.String()), &exp); err != nil {
			t.Fatal(err)
		}
		nodes, asserted := map[string]bool{}, map[string]bool{}
		for _, n := range exp.Nodes {
			nodes[n.ID] = true
		}
		for _, e := range exp.Events {
			if e.Act == "assert" {
				asserted[e.Subject] = true
			}
		}
		if len(exp.Claims) != 4 {
			t.Errorf("the export has %d claims, want 4", len(exp.Claims))
		}
		for _, c := range exp.Claims {
			if !nodes[c.ID] || !asserted[c.ID] {
				t.Errorf("%s in the export: a node %v, its assert event %v", c.ID, nodes[c.ID], asserted[c.ID])
			}
		}
		for _, id := range []string{"att_1", "ver_2", "ver_3"} {
			if !nodes[id] {
				t.Errorf("the export's graph lacks the stance %s", id)
			}
		}
	})
}

func mustRights(t *testing.T, rights string) protocol.Rights {
	t.Helper()
	r, err := protocol.ParseRights(rights)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
