package protocol

import (
	"context"

	"github.com/parleyforum/parley/storage"
)

// threadAsOf is thread t, its row as read now, as the point of read (storage.Forum.AsOf)
// held it (§ 15). When messages or events of the thread came after the point, its record up
// to the point is replayed by the rules that wrote the row: the messages give its count, its
// last message, whose awaiting the thread's is (setAwaiting), and its time; its events the
// state and its confirmation (setState, and a confirm's). Its title, whether that is hidden,
// and its room are as they are now: a hidden message is hidden on every page (§ 18), and who
// may read a thread is decided by the room it is in (§ 16).
func threadAsOf(ctx context.Context, read *storage.Forum, t *storage.Thread) (*storage.Thread, error) {
	rec, err := read.ThreadRecordAsOf(ctx, t.ID)
	if err != nil || rec == nil || rec.Last == nil {
		return t, err
	}
	was, m := *t, rec.Last
	was.MessageCount, was.LastMessageID, was.UpdatedAt = rec.Messages, &m.ID, m.CreatedAt
	was.AwaitingMode, was.AwaitingIdentity, was.AwaitingExtension, was.AwaitingSetBy = m.AwaitingMode, m.AwaitingIdentity, m.AwaitingExtension, m.AwaitingSetBy
	setBySelf(&was, m)
	for i := range rec.Events {
		ev := &rec.Events[i]
		switch ev.Act {
		case ActConfirm:
			was.StateConfirmedAt, was.ConfirmedState = &ev.At, was.State
		case ActMove:
			// The room is the one the thread is in now.
		default:
			setState(&was, State(ev.ToState), Marking{Origin: ev.Origin, Confirmed: confirmedWhenWritten(ev)}, ev, ev.At)
		}
		if ev.At.After(was.UpdatedAt) {
			was.UpdatedAt = ev.At
		}
	}
	return &was, nil
}

// confirmedWhenWritten tells an event whose state was confirmed as it was written (a human's
// or a lock holder's) from one a later confirm confirmed, which sets confirmed_at then.
func confirmedWhenWritten(ev *storage.Event) bool {
	return ev.Confirmed && ev.ConfirmedAt != nil && ev.ConfirmedAt.Equal(ev.At)
}
