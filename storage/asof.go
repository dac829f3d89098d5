package storage

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Reading the claims and messages as of a point of the record (PROTOCOL.md § 15, paged reads
// are read as of one point). The record is append-only: every claim is asserted with an
// event, every stance is written with its claim's event, and every change of a claim's state
// is an event that says the state it moved to. So a later snapshot can show what an earlier
// one held: the claims, stances and messages of the point, each claim in the state its last
// event of the point set — leaving out whatever was written after it (a thread's row:
// asof_thread.go).
//
// A point is the last event, stance, claim and message of a snapshot. On SQLite, whose
// writers take turns, rows are numbered in commit order, and the point is those numbers. On
// Postgres numbers are taken before commit: a transaction that took a smaller one may commit
// after the snapshot, and one that took its number before and its transaction id after the
// snapshot too. So the point also keeps the snapshot's xmax and the transactions running in
// it: a row whose transaction (the feed's tx, written by a trigger with every event and every
// message; a claim's or stance's is its event's) is one of those, or not below xmax, was not
// in the snapshot.

// Point is a point of the record: what one snapshot held.
type Point struct {
	// Event, Stance, Claim and Message are the last of each the snapshot held (0: none).
	Event, Stance, Claim, Message int64
	// StanceKind is the kind of the last stance ("" when there is none).
	StanceKind string
	// At is the snapshot's time (SnapshotTime): the time a claim's expiry is read against.
	At time.Time
	// XMax and Running are the Postgres snapshot's xmax and the transactions of this database
	// that were running in it (PinPoint); 0 and nil on SQLite.
	XMax    int64
	Running []int64
}

// PointNow is the point of f's snapshot (f a Forum of DB.Snapshot): its numbers and time.
// Its first read fixes the snapshot, as SnapshotTime's does, if nothing was read in it yet.
// A point that later reads are to be read as of needs PinPoint too.
func (f *Forum) PointNow(ctx context.Context) (Point, error) {
	var p Point
	var kind *string
	err := f.q.NewRaw(`SELECT
			(SELECT COALESCE(MAX(id), 0) FROM events) AS event,
			(SELECT COALESCE(MAX(id), 0) FROM claims) AS claim,
			(SELECT COALESCE(MAX(id), 0) FROM claim_stances) AS stance,
			(SELECT COALESCE(MAX(id), 0) FROM messages) AS message,
			(SELECT kind FROM claim_stances ORDER BY id DESC LIMIT 1) AS kind`).
		Scan(ctx, &p.Event, &p.Claim, &p.Stance, &p.Message, &kind)
	if err != nil {
		return p, translate(err)
	}
	p.At = Now()
	if kind != nil {
		p.StanceKind = *kind
	}
	return p, nil
}

// PinPoint completes p, the point of f's snapshot (PointNow, in the same snapshot), with what
// tells its rows from those of transactions that had not committed when it was taken: on
// Postgres the snapshot's xmax and running transactions; on SQLite there is nothing to add.
// A read that answers only its own page leaves it out; one whose cursor carries the point
// to later pages needs it.
func (f *Forum) PinPoint(ctx context.Context, p *Point) error {
	if f.db.kind != Postgres {
		return nil
	}
	// The transactions of other databases of the server never wrote a row here: they are
	// left out, as the read horizon leaves them out (horizonSQL).
	var running string
	err := f.q.NewRaw(`SELECT pg_snapshot_xmax(snap)::text::bigint AS xmax, COALESCE((
			SELECT string_agg(x::text, ',' ORDER BY x) FROM pg_snapshot_xip(snap) AS x
			WHERE x::xid NOT IN (SELECT backend_xid FROM pg_stat_activity
				WHERE backend_xid IS NOT NULL
					AND datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))
		), '') AS running
		FROM pg_current_snapshot() AS snap`).Scan(ctx, &p.XMax, &running)
	if err != nil {
		return translate(err)
	}
	p.Running = nil
	for _, x := range strings.Split(running, ",") {
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			p.Running = append(p.Running, n)
		}
	}
	return nil
}

// AsOf makes f's reads of claims, stances and messages (ClaimsOf, StancesOf,
// RefutedClaimsOf, Messages, ThreadRecordAsOf) answer as of p: the claims, stances and messages p
// held, each claim in the state it was in then. It returns f.
func (f *Forum) AsOf(p *Point) *Forum {
	f.asOf = &asOf{point: p}
	return f
}

// asOf is a Forum's point, with what was read of the rows written after it.
type asOf struct {
	point  *Point
	loaded bool
	// Rows at or below the point's numbers that its snapshot did not hold (Postgres only).
	events, stances, claims, messages map[int64]bool
	// The last event the point held of each claim that changed after it, which set the state
	// the point held; a claim written without events keeps its row's.
	states map[int64]*Event
}

// loadAsOf reads, once, the rows at or below the point's numbers that its snapshot did not
// hold, and the state the point held of each claim that changed after it.
func (f *Forum) loadAsOf(ctx context.Context) error {
	a := f.asOf
	if a.loaded {
		return nil
	}
	a.events, a.stances, a.claims, a.messages = map[int64]bool{}, map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	a.states = map[int64]*Event{}
	if f.db.kind == Postgres {
		if err := f.readUnseen(ctx); err != nil {
			return err
		}
	}
	if err := f.readStatesAsOf(ctx); err != nil {
		return err
	}
	a.loaded = true
	return nil
}

// readStatesAsOf finds the claims that changed after the point — those with an event after it
// — and the last event the point held of each.
func (f *Forum) readStatesAsOf(ctx context.Context) error {
	a := f.asOf
	var changed []string
	after := "id > ?"
	args := []any{a.point.Event}
	if len(a.events) > 0 {
		after += " OR id IN (?)"
		args = append(args, bun.In(keys(a.events)))
	}
	err := f.q.NewSelect().Model((*Event)(nil)).ColumnExpr("DISTINCT subject").
		Where("subject LIKE ?", "cl%").Where("("+after+")", args...).Scan(ctx, &changed)
	if err != nil || len(changed) == 0 {
		return translate(err)
	}
	ids := make([]int64, 0, len(changed))
	for _, s := range changed {
		if id, err := strconv.ParseInt(strings.TrimPrefix(s, "cl_"), 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	// The events are read by thread, which their index leads with.
	var threads []int64
	err = f.q.NewSelect().Model((*Claim)(nil)).ColumnExpr("DISTINCT thread_id").
		Where("id IN (?)", bun.In(ids)).Scan(ctx, &threads)
	if err != nil || len(threads) == 0 {
		return translate(err)
	}
	var events []Event
	err = f.q.NewSelect().Model(&events).
		Where("thread_id IN (?)", bun.In(threads)).Where("subject IN (?)", bun.In(changed)).
		Where("id <= ?", a.point.Event).Order("id").Scan(ctx)
	if err != nil {
		return translate(err)
	}
	for i := range events {
		ev := &events[i]
		if a.events[ev.ID] {
			continue
		}
		if id, err := strconv.ParseInt(strings.TrimPrefix(ev.Subject, "cl_"), 10, 64); err == nil {
			a.states[id] = ev
		}
	}
	return nil
}

// readUnseen reads the feed's rows written by transactions the point's snapshot did not see —
// running in it, or begun after it — that bear on a row at or below the point's numbers: a
// message, an event, the stance an event was written with, the claim an assert event
// asserted.
func (f *Forum) readUnseen(ctx context.Context) error {
	a, p := f.asOf, f.asOf.point
	var rows []struct {
		Message  *int64  `bun:"message_id"`
		Event    *int64  `bun:"event_id"`
		Act      *string `bun:"act"`
		Subject  *string `bun:"subject"`
		StanceID *int64  `bun:"stance_id"`
	}
	unseen := "fd.tx >= ?"
	args := []any{p.XMax}
	if len(p.Running) > 0 {
		unseen += " OR fd.tx IN (?)"
		args = append(args, bun.In(p.Running))
	}
	err := f.q.NewSelect().TableExpr("feed AS fd").Join("LEFT JOIN events AS e ON e.id = fd.event_id").
		ColumnExpr("fd.message_id, e.id AS event_id, e.act, e.subject, e.stance_id").
		Where("("+unseen+")", args...).
		Where("(fd.message_id <= ? OR e.id <= ? OR e.stance_id <= ? OR (CASE WHEN e.act = 'assert' THEN CAST(SUBSTR(e.subject, 4) AS BIGINT) END) <= ?)",
			p.Message, p.Event, p.Stance, p.Claim).
		Scan(ctx, &rows)
	if err != nil {
		return translate(err)
	}
	for _, r := range rows {
		if r.Message != nil && *r.Message <= p.Message {
			a.messages[*r.Message] = true
		}
		if r.Event == nil {
			continue
		}
		if *r.Event <= p.Event {
			a.events[*r.Event] = true
		}
		if r.StanceID != nil && *r.StanceID <= p.Stance {
			a.stances[*r.StanceID] = true
		}
		if *r.Act == "assert" {
			if id, err := strconv.ParseInt(strings.TrimPrefix(*r.Subject, "cl_"), 10, 64); err == nil && id <= p.Claim {
				a.claims[id] = true
			}
		}
	}
	return nil
}

// claimsAsOf keeps the claims the point held, each as it was then.
func (f *Forum) claimsAsOf(ctx context.Context, claims []Claim) ([]Claim, error) {
	if err := f.loadAsOf(ctx); err != nil {
		return nil, err
	}
	a := f.asOf
	held := func(id int64) bool { return id <= a.point.Claim && !a.claims[id] }
	out := claims[:0]
	for _, c := range claims {
		if !held(c.ID) {
			continue
		}
		if c.SupersededBy != nil && !held(*c.SupersededBy) {
			c.SupersededBy = nil
		}
		if ev, changed := a.states[c.ID]; changed {
			c.State, c.StateOrigin, c.UpdatedAt = ev.ToState, ev.Origin, ev.At
			c.StateConfirmedAt = nil
			if ev.Confirmed {
				c.StateConfirmedAt = &ev.At
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// stancesAsOf narrows a query of stances (alias stance) to those the point held.
func (f *Forum) stancesAsOf(ctx context.Context, q *bun.SelectQuery, column string) (*bun.SelectQuery, error) {
	if err := f.loadAsOf(ctx); err != nil {
		return nil, err
	}
	q = q.Where("? <= ?", bun.Ident(column), f.asOf.point.Stance)
	if len(f.asOf.stances) > 0 {
		q = q.Where("? NOT IN (?)", bun.Ident(column), bun.In(keys(f.asOf.stances)))
	}
	return q, nil
}

// claimIDsAsOf narrows a query of claims to those the point held (after loadAsOf).
func (f *Forum) claimIDsAsOf(q *bun.SelectQuery) *bun.SelectQuery {
	q = q.Where("id <= ?", f.asOf.point.Claim)
	if len(f.asOf.claims) > 0 {
		q = q.Where("id NOT IN (?)", bun.In(keys(f.asOf.claims)))
	}
	return q
}

// messagesAsOf narrows a query of messages (column, their id) to those the point held.
func (f *Forum) messagesAsOf(ctx context.Context, q *bun.SelectQuery, column string) (*bun.SelectQuery, error) {
	if err := f.loadAsOf(ctx); err != nil {
		return nil, err
	}
	q = q.Where("? <= ?", bun.Ident(column), f.asOf.point.Message)
	if len(f.asOf.messages) > 0 {
		q = q.Where("? NOT IN (?)", bun.Ident(column), bun.In(keys(f.asOf.messages)))
	}
	return q, nil
}

func keys[K comparable](m map[K]bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
