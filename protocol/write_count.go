package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// writeCount is the last check of § 9 for the writes of the artifacts and signed profiles,
// which are no message and no claim: one write against the caller's writes_per_minute,
// counted inside the write's transaction (count), and given back when that transaction
// fails (giveBack).
type writeCount struct {
	release func()
}

// count takes one write of a's rate; f is the write's transaction.
func (wc *writeCount) count(_ context.Context, s *Service, f *storage.Forum, a *Actor, now time.Time) error {
	release, err := (&write{s: s, f: f, actor: a, now: now}).reserveRate()
	if err != nil {
		return err
	}
	wc.release = release
	return nil
}

// giveBack returns the write of a failed transaction.
func (wc *writeCount) giveBack() {
	if wc.release != nil {
		wc.release()
		wc.release = nil
	}
}
