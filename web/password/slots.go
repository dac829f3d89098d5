package password

import (
	"context"
	"errors"
	"math"
	"runtime/debug"
	"time"
)

// Each hash or check takes memoryKiB (64 MiB) while it runs, so how many run at once is
// bounded: without a bound, 36 parallel logins took a server from 200 MB to 2.4 GB. The
// bound is sized to the memory the process may use (GOMEMLIMIT): a quarter of it, in 64 MiB
// slots, at least 1 and at most 4; without a limit, 4 (256 MiB).
var slots = make(chan struct{}, SlotCount())

// SlotCount is how many hashes or checks may run at once.
func SlotCount() int {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return 4
	}
	return max(1, min(4, int(limit/4/(memoryKiB*1024))))
}

// ErrBusy means every slot stayed taken for as long as the caller would wait: the server is
// checking as many passwords as its memory allows; retry in a moment.
var ErrBusy = errors.New("password: too many checks at once")

// acquire takes a slot, waiting at most wait (and not beyond ctx).
func acquire(ctx context.Context, wait time.Duration) (release func(), err error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	default:
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-timer.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ErrBusy
	}
}

// VerifyWithin is Verify in one of the slots, waiting at most wait for one: ErrBusy when
// none came free.
func VerifyWithin(ctx context.Context, wait time.Duration, encoded, pw string) (bool, error) {
	release, err := acquire(ctx, wait)
	if err != nil {
		return false, err
	}
	defer release()
	return Verify(encoded, pw)
}

// HashWithin is Hash in one of the slots, waiting at most wait for one: ErrBusy when none
// came free.
func HashWithin(ctx context.Context, wait time.Duration, pw string) (string, error) {
	release, err := acquire(ctx, wait)
	if err != nil {
		return "", err
	}
	defer release()
	return Hash(pw)
}
