package storage

import (
	"context"
	"strconv"

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

// AnchorsAfter reads the messages the claims within f's scope (of one thread when p.Thread is
// set) are anchored in, by id: the message nodes of the claim graph.
func (f *Forum) AnchorsAfter(ctx context.Context, p DatasetPage) ([]Message, error) {
	out := []Message{}
	anchors := f.q.NewSelect().Model((*Claim)(nil)).Column("anchor_id")
	if p.Thread != 0 {
		anchors = anchors.Where("thread_id = ?", p.Thread)
	}
	anchors = f.scope.onThreads(anchors, "thread_id")
	err := f.q.NewSelect().Model(&out).Where("id > ?", p.After).Where("id IN (?)", anchors).
		OrderExpr("id").Limit(int64(p.Limit)).Scan(ctx)
	return out, translate(err)
}

// ClaimLinksOf reads the claims of the threads with their id, thread and superseded_by only,
// by id, within f's scope: what labelling them (grounded semantics) needs beside their
// refutations, a few bytes a claim.
func (f *Forum) ClaimLinksOf(ctx context.Context, threadIDs ...int64) ([]Claim, error) {
	out := []Claim{}
	if len(threadIDs) == 0 {
		return out, nil
	}
	q := f.q.NewSelect().Model(&out).Column("id", "thread_id", "superseded_by").
		Where("thread_id IN (?)", bun.In(threadIDs)).Order("id")
	err := f.scope.onThreads(q, "thread_id").Scan(ctx)
	return out, translate(err)
}

// StanceDocument is a signed stance's document (§ 14), named by the stance's kind and id.
type StanceDocument struct {
	ID    int64  `bun:"id"`
	Kind  string `bun:"kind"`
	Proof string `bun:"proof"`
}

// StanceDocumentsAfter reads the documents of the signed stances on the claims within f's
// scope (of one thread when p.Thread is set) in the order of their keys' text — att_1, att_10,
// att_2, …, ref_…, ver_… — as a JSON object's members stand in canonical form (RFC 8785):
// kind first (attest, refute, verify order as their keys' prefixes do), then the id as
// decimal text, compared byte by byte. after is the last document read (nil: from the first).
func (f *Forum) StanceDocumentsAfter(ctx context.Context, p DatasetPage, after *StanceDocument) ([]StanceDocument, error) {
	out := []StanceDocument{}
	idText := "CAST(stance.id AS TEXT)"
	if f.db.kind == Postgres {
		idText += ` COLLATE "C"`
	}
	q := f.q.NewSelect().Model((*Stance)(nil)).Column("stance.id", "stance.kind", "stance.proof").
		Join("JOIN claims AS sc ON sc.id = stance.claim_id").
		Where("stance.proof IS NOT NULL").
		OrderExpr("stance.kind").OrderExpr(idText).Limit(int64(p.Limit))
	if after != nil {
		q = q.Where("(stance.kind > ? OR (stance.kind = ? AND "+idText+" > ?))", after.Kind, after.Kind, strconv.FormatInt(after.ID, 10))
	}
	if p.Thread != 0 {
		q = q.Where("sc.thread_id = ?", p.Thread)
	}
	err := f.scope.onThreads(q, "sc.thread_id").Scan(ctx, &out)
	return out, translate(err)
}
