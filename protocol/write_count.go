package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// countWrite is the last check of § 9 for the writes of the artifacts and signed profiles,
// which are no message and no claim: one write against the caller's writes_per_minute,
// counted in the database inside the write's own transaction f, so that a write that fails
// counts nothing and the limit holds across instances.
func (s *Service) countWrite(ctx context.Context, f *storage.Forum, a *Actor, now time.Time) error {
	return (&write{s: s, f: f, actor: a, now: now}).countWrite(ctx)
}
