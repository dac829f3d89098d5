package storage

import (
	"context"
	"fmt"
	"reflect"

	"github.com/uptrace/bun"
)

// FeedQuery asks for what was written after a feed position: every thread's, or one's.
type FeedQuery struct {
	After    Position
	ThreadID int64 // 0: every thread
	Limit    int
}

// FeedItem is one entry of the feed: a message or an event, at its position.
type FeedItem struct {
	Position Position
	Message  *Message // exactly one of Message and Event is set
	Event    *Event
}

// feedRow is the horizon and, when there is one, an entry with its message or event.
type feedRow struct {
	HTx       int64   `bun:"htx"`
	HSeq      int64   `bun:"hseq"`
	Tx        *int64  `bun:"x_tx"`
	Seq       *int64  `bun:"x_seq"`
	MessageID *int64  `bun:"x_message_id"`
	EventID   *int64  `bun:"x_event_id"`
	Message   Message `bun:"embed:m_"`
	Event     Event   `bun:"embed:e_"`
}

// Feed lists, in commit order, up to q.Limit entries of the feed after q.After, and the
// horizon: the position below which everything has been seen, which a reader may keep when
// nothing is new. As for the inbox (see horizonSQL), a position at or below the horizon is
// final, so a reader that moves only across final positions never skips a concurrent commit.
// The horizon, the entries and their rows come from one statement, so from one snapshot.
func (f *Forum) Feed(ctx context.Context, q FeedQuery) (items []FeedItem, horizon Position, err error) {
	txCol, order := "0", "fe.seq" // SQLite: one writer at a time, rows numbered in commit order
	if f.db.kind == Postgres {
		txCol, order = "fe.tx", "fe.tx, fe.seq"
	}
	pos := "(" + txCol + ", fe.seq)"
	entries := `SELECT ` + txCol + ` AS tx, fe.seq, fe.message_id, fe.event_id FROM feed AS fe, h
		WHERE ` + pos + ` > (?, ?) AND ` + pos + ` <= (h.htx, h.hseq)`
	args := []any{q.After.Tx, q.After.Seq}
	if q.ThreadID != 0 {
		entries += " AND fe.thread_id = ?"
		args = append(args, q.ThreadID)
	}
	if cond, more := f.scope.ThreadCondition("fe.thread_id"); cond != "" {
		entries += " AND " + cond
		args = append(args, more...)
	}
	entries += " ORDER BY " + order + " LIMIT ?"
	args = append(args, q.Limit)
	sel := f.q.NewSelect().
		With("h", f.q.NewRaw(f.db.feedHorizonSQL())).
		With("x", f.q.NewRaw(entries, args...)).
		TableExpr("h").
		Join("LEFT JOIN x ON 1 = 1").
		Join("LEFT JOIN messages AS m ON m.id = x.message_id").
		Join("LEFT JOIN events AS e ON e.id = x.event_id").
		ColumnExpr("h.htx AS htx, h.hseq AS hseq, x.tx AS x_tx, x.seq AS x_seq, x.message_id AS x_message_id, x.event_id AS x_event_id")
	for _, field := range f.db.Table(reflect.TypeOf((*Message)(nil))).Fields {
		sel = sel.ColumnExpr("m.? AS ?", bun.Ident(field.Name), bun.Ident("m_"+field.Name))
	}
	for _, field := range f.db.Table(reflect.TypeOf((*Event)(nil))).Fields {
		sel = sel.ColumnExpr("e.? AS ?", bun.Ident(field.Name), bun.Ident("e_"+field.Name))
	}
	var rows []feedRow
	if err := sel.OrderExpr("x.tx, x.seq").Scan(ctx, &rows); err != nil {
		return nil, Position{}, translate(err)
	}
	if len(rows) == 0 {
		return nil, Position{}, fmt.Errorf("feed: the horizon row is missing")
	}
	horizon = Position{Tx: rows[0].HTx, Seq: rows[0].HSeq}
	for i := range rows {
		r := &rows[i]
		if r.Tx == nil {
			continue
		}
		item := FeedItem{Position: Position{Tx: *r.Tx, Seq: *r.Seq}}
		if r.MessageID != nil {
			item.Message = &r.Message
		} else {
			item.Event = &r.Event
		}
		items = append(items, item)
	}
	return items, horizon, nil
}
