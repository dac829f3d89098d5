package storage

import (
	"context"
	"fmt"
	"sort"
)

// InboxQuery asks for the threads whose turn is Identity's.
type InboxQuery struct {
	Identity string
	// Extension narrows the view to one extension (§ 7): directed turns count only when they
	// are for it, and open calls it asked itself are hidden. nil is the whole line's view.
	Extension *string
	After     Position
	Limit     int
}

// InboxItem is a thread at its inbox position.
type InboxItem struct {
	Thread   Thread
	Position Position
}

type inboxRow struct {
	HTx      int64  `bun:"htx"`
	HSeq     int64  `bun:"hseq"`
	ID       *int64 `bun:"id"`
	InboxTx  *int64 `bun:"inbox_tx"`
	InboxSeq *int64 `bun:"inbox_seq"`
}

// Inbox lists, in commit order, up to q.Limit threads whose awaiting changed after q.After
// and is the caller's; horizon is the position below which everything has been seen, the
// position a reader may keep when nothing is new.
//
// Directed turns and open calls are two ranges of one index (inbox_to, inbox_tx, inbox_seq),
// each read in order and cut at the limit, so a read costs what is new, not what is stored.
// The horizon is computed in the same statement, from the same snapshot as the rows.
func (f *Forum) Inbox(ctx context.Context, q InboxQuery) (items []InboxItem, horizon Position, err error) {
	directedExt, anyExcept := "", ""
	var directedArgs, anyArgs []any
	if q.Extension != nil {
		directedExt = " AND t.awaiting_extension = ?"
		directedArgs = append(directedArgs, *q.Extension)
		anyExcept = " AND NOT (t.awaiting_identity = ? AND t.awaiting_extension = ?)"
		anyArgs = append(anyArgs, q.Identity, *q.Extension)
	}
	part := func(to, extra string) string {
		return `SELECT t.id, t.inbox_tx, t.inbox_seq FROM threads AS t, h
			WHERE t.inbox_to = ` + to + ` AND (t.inbox_tx, t.inbox_seq) > (?, ?)
			AND (t.inbox_tx, t.inbox_seq) <= (h.htx, h.hseq)` + extra + `
			ORDER BY t.inbox_tx, t.inbox_seq LIMIT ?`
	}
	sql := fmt.Sprintf(`WITH h AS (%s),
		d AS (%s),
		a AS (%s)
		SELECT h.htx AS htx, h.hseq AS hseq, x.id AS id, x.inbox_tx AS inbox_tx, x.inbox_seq AS inbox_seq
		FROM h LEFT JOIN (SELECT * FROM d UNION ALL SELECT * FROM a) AS x ON 1 = 1
		ORDER BY x.inbox_tx, x.inbox_seq`,
		f.db.horizonSQL(), part("?", directedExt), part("'"+InboxAny+"'", anyExcept))

	args := []any{q.Identity, q.After.Tx, q.After.Seq}
	args = append(args, directedArgs...)
	args = append(args, q.Limit, q.After.Tx, q.After.Seq)
	args = append(args, anyArgs...)
	args = append(args, q.Limit)

	var rows []inboxRow
	if err := f.q.NewRaw(sql, args...).Scan(ctx, &rows); err != nil {
		return nil, Position{}, translate(err)
	}
	if len(rows) == 0 {
		return nil, Position{}, fmt.Errorf("inbox: the horizon row is missing")
	}
	horizon = Position{Tx: rows[0].HTx, Seq: rows[0].HSeq}
	var ids []int64
	positions := map[int64]Position{}
	for _, r := range rows {
		if r.ID == nil {
			continue
		}
		ids = append(ids, *r.ID)
		positions[*r.ID] = Position{Tx: *r.InboxTx, Seq: *r.InboxSeq}
		if len(ids) == q.Limit {
			break
		}
	}
	if len(ids) == 0 {
		return nil, horizon, nil
	}
	var threads []Thread
	if err := f.q.NewSelect().Model(&threads).Where("id IN (?)", bunIn(ids)).Scan(ctx); err != nil {
		return nil, horizon, translate(err)
	}
	for _, t := range threads {
		items = append(items, InboxItem{Thread: t, Position: positions[t.ID]})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Position.Less(items[j].Position) })
	return items, horizon, nil
}
