package storage

import (
	"context"
	"fmt"
	"reflect"

	"github.com/uptrace/bun"
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

// inboxRow is the horizon and, when there is one, an item: its position and its thread, the
// thread's columns under the prefix t_.
type inboxRow struct {
	HTx    int64  `bun:"htx"`
	HSeq   int64  `bun:"hseq"`
	Tx     *int64 `bun:"x_tx"`
	Seq    *int64 `bun:"x_seq"`
	Thread Thread `bun:"embed:t_"` // all zero on the horizon's own row
}

// Inbox lists, in commit order, up to q.Limit threads whose awaiting changed after q.After
// and is the caller's; horizon is the position below which everything has been seen, the
// position a reader may keep when nothing is new.
//
// Directed turns and open calls are two ranges of one index (inbox_to, inbox_tx, inbox_seq),
// each read in order and cut at the limit, so a read costs what is new, not what is stored.
// The horizon, the positions and the threads come from one statement, so from one snapshot: a
// thread read apart from its position could have moved on since, to a turn that is no longer
// the caller's.
func (f *Forum) Inbox(ctx context.Context, q InboxQuery) (items []InboxItem, horizon Position, err error) {
	directedExt, anyExcept := "", ""
	directedArgs := []any{q.Identity, q.After.Tx, q.After.Seq}
	anyArgs := []any{q.After.Tx, q.After.Seq}
	if q.Extension != nil {
		directedExt = " AND t.awaiting_extension = ?"
		directedArgs = append(directedArgs, *q.Extension)
		anyExcept = " AND NOT (t.awaiting_identity = ? AND t.awaiting_extension = ?)"
		anyArgs = append(anyArgs, q.Identity, *q.Extension)
	}
	directedExt, directedArgs = f.scope.and(directedExt, directedArgs, "t.room_id")
	anyExcept, anyArgs = f.scope.and(anyExcept, anyArgs, "t.room_id")
	directedArgs = append(directedArgs, q.Limit)
	anyArgs = append(anyArgs, q.Limit)
	part := func(to, extra string) string {
		return `SELECT t.id, t.inbox_tx, t.inbox_seq FROM threads AS t, h
			WHERE t.inbox_to = ` + to + ` AND (t.inbox_tx, t.inbox_seq) > (?, ?)
			AND (t.inbox_tx, t.inbox_seq) <= (h.htx, h.hseq)` + extra + `
			ORDER BY t.inbox_tx, t.inbox_seq LIMIT ?`
	}
	sel := f.q.NewSelect().
		With("h", f.q.NewRaw(f.db.horizonSQL())).
		With("d", f.q.NewRaw(part("?", directedExt), directedArgs...)).
		With("a", f.q.NewRaw(part("'"+InboxAny+"'", anyExcept), anyArgs...)).
		TableExpr("h").
		Join("LEFT JOIN (SELECT * FROM d UNION ALL SELECT * FROM a) AS x ON 1 = 1").
		Join("LEFT JOIN threads AS th ON th.id = x.id").
		ColumnExpr("h.htx AS htx, h.hseq AS hseq, x.inbox_tx AS x_tx, x.inbox_seq AS x_seq")
	for _, field := range f.db.Table(reflect.TypeOf((*Thread)(nil))).Fields {
		sel = sel.ColumnExpr("th.? AS ?", bun.Ident(field.Name), bun.Ident("t_"+field.Name))
	}
	var rows []inboxRow
	if err := sel.OrderExpr("x.inbox_tx, x.inbox_seq").Scan(ctx, &rows); err != nil {
		return nil, Position{}, translate(err)
	}
	if len(rows) == 0 {
		return nil, Position{}, fmt.Errorf("inbox: the horizon row is missing")
	}
	horizon = Position{Tx: rows[0].HTx, Seq: rows[0].HSeq}
	for _, r := range rows {
		if r.Tx == nil {
			continue
		}
		items = append(items, InboxItem{Thread: r.Thread, Position: Position{Tx: *r.Tx, Seq: *r.Seq}})
		if len(items) == q.Limit {
			break
		}
	}
	return items, horizon, nil
}
