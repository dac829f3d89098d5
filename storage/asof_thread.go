package storage

import (
	"context"
	"strconv"

	"github.com/uptrace/bun"
)

// A thread as of a point (PROTOCOL.md § 15): a thread's row changes with each of its
// messages (its count, its last message, whose awaiting it takes, its time) and with each
// event of the thread itself (its state and confirmation, its room). Both are kept: so the
// record up to the point says what the row was then.

// ThreadRecord is what a point held of a thread that changed after it: the events of the
// thread itself (subject th_N), oldest first, how many messages it had and the last of them.
type ThreadRecord struct {
	Events   []Event
	Messages int
	Last     *Message
}

// ThreadRecordAsOf reads what f's point (AsOf) held of thread id's record; nil when none of
// the thread's messages and events came after the point, so that its row is as it was then.
func (f *Forum) ThreadRecordAsOf(ctx context.Context, id int64) (*ThreadRecord, error) {
	if err := f.loadAsOf(ctx); err != nil {
		return nil, err
	}
	a := f.asOf
	subject := "th_" + strconv.FormatInt(id, 10)
	later, args := afterPoint("id", a.point.Message, a.messages)
	messages := f.q.NewSelect().Model((*Message)(nil)).ColumnExpr("1").Where("thread_id = ?", id).Where(later, args...)
	later, args = afterPoint("id", a.point.Event, a.events)
	events := f.q.NewSelect().Model((*Event)(nil)).ColumnExpr("1").
		Where("thread_id = ?", id).Where("subject = ?", subject).Where(later, args...)
	var changed bool
	if err := f.q.NewRaw("SELECT EXISTS (?) OR EXISTS (?)", messages, events).Scan(ctx, &changed); err != nil {
		return nil, translate(err)
	}
	if !changed {
		return nil, nil
	}

	rec := &ThreadRecord{}
	held, err := f.messagesAsOf(ctx, f.q.NewSelect().Model((*Message)(nil)).Where("thread_id = ?", id), "id")
	if err != nil {
		return nil, err
	}
	count, err := held.Count(ctx)
	if err != nil {
		return nil, translate(err)
	}
	rec.Messages = int(count)
	var last []Message
	if held, err = f.messagesAsOf(ctx, f.q.NewSelect().Model(&last).Where("thread_id = ?", id), "id"); err != nil {
		return nil, err
	}
	if err := held.OrderExpr("id DESC").Limit(1).Scan(ctx); err != nil {
		return nil, translate(err)
	}
	if len(last) == 1 {
		rec.Last = &last[0]
	}
	q := f.q.NewSelect().Model(&rec.Events).Where("thread_id = ?", id).Where("subject = ?", subject).
		Where("id <= ?", a.point.Event).Order("id")
	if len(a.events) > 0 {
		q = q.Where("id NOT IN (?)", bun.In(keys(a.events)))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, translate(err)
	}
	return rec, nil
}

// afterPoint is the condition on column (a row's id) that the row came after a point whose
// last row of its kind was last: a larger id, or one its snapshot did not see (unseen).
func afterPoint(column string, last int64, unseen map[int64]bool) (string, []any) {
	if len(unseen) == 0 {
		return "? > ?", []any{bun.Ident(column), last}
	}
	return "(? > ? OR ? IN (?))", []any{bun.Ident(column), last, bun.Ident(column), bun.In(keys(unseen))}
}
