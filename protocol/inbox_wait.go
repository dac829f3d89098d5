package protocol

import (
	"context"
	"sync"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 7's long poll: an inbox read with wait_seconds waits for the database's change signal
// (storage.Changes), never by asking the database again and again, so that a waiting poll
// costs nothing until a change concerns it. Waits are bounded in number, per identity and in
// all (limits inbox_waits_per_identity and inbox_waits_max), because each is a request held
// open.

// settleDelays are the re-reads after a wake-up whose read found nothing new. On Postgres a
// change that has committed can stay behind the read's horizon for as long as an older
// transaction still runs (storage/dialect.go); that transaction's end announces nothing, so
// the waiter looks again a few times, briefly, instead of missing the change until its wait
// ends.
var settleDelays = []time.Duration{50 * time.Millisecond, 250 * time.Millisecond, time.Second}

// waitInbox reads, and while there is nothing, waits for a change of the caller's turns (or
// anyone's), the end of the wait or the end of ctx, whichever comes first.
func (s *Service) waitInbox(ctx context.Context, a *Actor, p *inboxParams) (*InboxResult, error) {
	var res *InboxResult
	err := waitForNews(ctx, p.wait, func() <-chan struct{} { return s.db.Changes().Wait(a.Identity) },
		func() (bool, error) {
			var err error
			if res, err = s.boundedInboxRead(ctx, a, p); err != nil || len(res.Items) > 0 {
				return true, err
			}
			p.after = res.at
			return false, nil
		})
	return res, err
}

// waitForNews calls read until it finds something (or fails), waiting between two reads for
// the signal that signal returns before each read, for a settling re-read after a wake-up, for
// the end of the wait or for the end of ctx; the last two end it without an error.
func waitForNews(ctx context.Context, wait time.Duration, signal func() <-chan struct{}, read func() (found bool, err error)) error {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	settled := len(settleDelays) // no wake-up to settle yet
	for {
		changed := signal()
		if found, err := read(); err != nil || found {
			return err
		}
		var recheck <-chan time.Time
		if settled < len(settleDelays) {
			recheck = time.After(settleDelays[settled])
			settled++
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			return nil
		case <-changed:
			settled = 0
		case <-recheck:
		}
	}
}

// announce wakes the long polls a committed change concerns: those of the identity whose
// turn it now is, or all of them for a turn open to anyone. A change that leaves the turn to
// nobody adds to no inbox and wakes nobody.
func (s *Service) announce(t *ThreadView) {
	if t == nil || t.Awaiting == nil {
		return
	}
	key := storage.AnyKey
	if t.Awaiting.To != nil {
		key = t.Awaiting.To.Identity
	}
	s.db.Changes().Publish(key)
}

// waitSlots counts the long polls waiting at once.
type waitSlots struct {
	mu          sync.Mutex
	perIdentity int
	max         int
	total       int
	byIdentity  map[string]int
}

func newWaitSlots(perIdentity, max int) *waitSlots {
	return &waitSlots{perIdentity: perIdentity, max: max, byIdentity: map[string]int{}}
}

// waitRetryAfter is the retry_after of a long poll refused for want of a place.
const waitRetryAfter = 1

// take gives identity a place to wait, or refuses as rate_limited when it holds
// inbox_waits_per_identity places already or the instance inbox_waits_max. release gives the
// place back.
func (w *waitSlots) take(identity string) (release func(), err *Error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var refusal *Error
	switch {
	case w.byIdentity[identity] >= w.perIdentity:
		refusal = Refuse(ReasonRateLimited, "%d long polls of this identity are waiting already (limits.inbox_waits_per_identity); retry in %d second",
			w.perIdentity, waitRetryAfter)
	case w.total >= w.max:
		refusal = Refuse(ReasonRateLimited, "%d long polls are waiting already on this server (limits.inbox_waits_max); retry in %d second",
			w.max, waitRetryAfter)
	}
	if refusal != nil {
		refusal.RetryAfter = waitRetryAfter
		return nil, refusal
	}
	w.byIdentity[identity]++
	w.total++
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.total--
		if w.byIdentity[identity]--; w.byIdentity[identity] == 0 {
			delete(w.byIdentity, identity)
		}
	}, nil
}
