package password

import (
	"context"
	"errors"
	"testing"
	"time"
)

// At most SlotCount checks run at once; one more waits, and is refused with ErrBusy when no
// slot comes free in time.
func TestChecksAreBoundedInNumber(t *testing.T) {
	if n := SlotCount(); n < 1 || n > 4 {
		t.Fatalf("SlotCount = %d, want 1-4", n)
	}
	h, err := Hash("a good password")
	if err != nil {
		t.Fatal(err)
	}
	var releases []func()
	for range SlotCount() {
		release, err := acquire(context.Background(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	start := time.Now()
	if _, err := VerifyWithin(context.Background(), 50*time.Millisecond, h, "a good password"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a check with every slot taken: %v, want ErrBusy", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the refused check waited %v", took)
	}
	releases[0]()
	if ok, err := VerifyWithin(context.Background(), time.Second, h, "a good password"); err != nil || !ok {
		t.Errorf("a check once a slot is free: %v %v", ok, err)
	}
	for _, r := range releases[1:] {
		r()
	}
}
