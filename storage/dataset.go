package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// Keyset pages for the dataset (PROTOCOL.md § 15): every row of one kind within the scope,
// in order of id, after the id of the last row read. Read inside one DB.Snapshot, the pages
// together are one consistent forum, and memory holds one page at a time whatever the
// forum's size.

// DatasetPage says which page to read: the rows after the id After, at most Limit of them,
// of one thread when Thread is not 0.
type DatasetPage struct {
	Thread int64
	After  int64
	Limit  int
}

// page adds the keyset and the thread to q, whose id column is idCol and thread column
// threadCol.
func (p DatasetPage) page(q *bun.SelectQuery, idCol, threadCol string) *bun.SelectQuery {
	q = q.Where(idCol+" > ?", p.After).OrderExpr(idCol).Limit(int64(p.Limit))
	if p.Thread != 0 {
		q = q.Where(threadCol+" = ?", p.Thread)
	}
	return q
}

// RoomsAfter reads the rooms within f's scope, by id.
func (f *Forum) RoomsAfter(ctx context.Context, p DatasetPage) ([]Room, error) {
	out := []Room{}
	q := f.q.NewSelect().Model(&out).Where("room.id > ?", p.After).Order("room.id").Limit(int64(p.Limit))
	err := f.scope.onRooms(q, "room.id").Scan(ctx)
	return out, translate(err)
}

// ThreadsAfter reads the threads within f's scope, by id.
func (f *Forum) ThreadsAfter(ctx context.Context, p DatasetPage) ([]Thread, error) {
	out := []Thread{}
	q := p.page(f.q.NewSelect().Model(&out), "id", "id")
	err := f.scope.onRooms(q, "room_id").Scan(ctx)
	return out, translate(err)
}

// MessagesAfter reads the messages of the threads within f's scope, by id.
func (f *Forum) MessagesAfter(ctx context.Context, p DatasetPage) ([]Message, error) {
	out := []Message{}
	q := p.page(f.q.NewSelect().Model(&out), "id", "thread_id")
	err := f.scope.onThreads(q, "thread_id").Scan(ctx)
	return out, translate(err)
}

// EventsAfter reads the events of the threads within f's scope, by id.
func (f *Forum) EventsAfter(ctx context.Context, p DatasetPage) ([]Event, error) {
	out := []Event{}
	q := p.page(f.q.NewSelect().Model(&out), "id", "thread_id")
	err := f.scope.onThreads(q, "thread_id").Scan(ctx)
	return out, translate(err)
}

// ClaimsAfter reads the claims of the threads within f's scope, by id.
func (f *Forum) ClaimsAfter(ctx context.Context, p DatasetPage) ([]Claim, error) {
	out := []Claim{}
	q := p.page(f.q.NewSelect().Model(&out), "id", "thread_id")
	err := f.scope.onThreads(q, "thread_id").Scan(ctx)
	return out, translate(err)
}

// StancesAfter reads the stances on the claims within f's scope, by id, each signed one with
// its key's public key (as StancesOf).
func (f *Forum) StancesAfter(ctx context.Context, p DatasetPage) ([]Stance, error) {
	out := []Stance{}
	q := f.q.NewSelect().Model(&out).
		ColumnExpr("stance.*").ColumnExpr("signing_key.public_key AS signature_public_key").
		Join("LEFT JOIN signing_keys AS signing_key ON signing_key.id = stance.signature_key_id").
		Join("JOIN claims AS sc ON sc.id = stance.claim_id")
	q = p.page(q, "stance.id", "sc.thread_id")
	err := f.scope.onThreads(q, "sc.thread_id").Scan(ctx)
	return out, translate(err)
}

// SupersededAmong maps each of the claims ids that superseded others to the claims it
// superseded, oldest first: the supersedes of a page of claims, whose older claims may lie
// on earlier pages.
func (f *Forum) SupersededAmong(ctx context.Context, ids []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []Claim
	err := f.q.NewSelect().Model(&rows).Column("id", "superseded_by").
		Where("superseded_by IN (?)", bun.In(ids)).Order("id").Scan(ctx)
	for _, c := range rows {
		out[*c.SupersededBy] = append(out[*c.SupersededBy], c.ID)
	}
	return out, translate(err)
}
