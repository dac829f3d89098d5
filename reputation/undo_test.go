package reputation_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// A confirm its confirmer took back — the queue's Undo, a re-mark of their own back to the
// state before, as the thread's next change of state — does not count as a confirmation: the
// proposal is corrected, in the record, on the profile (with the state it was given instead
// and by whom) and on /health. A later re-mark that upholds the proposal, or another human's
// re-mark, leaves the confirm standing.
func TestUndoneConfirmIsNoConfirmation(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		rep := reputation.New(svc, reputation.Options{})
		alice, bob := actor("alice", "read,write"), actor("bob", "read,write")
		ada, bea := protocol.HumanActor("ada"), protocol.HumanActor("bea")
		do := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		proposal := func() string {
			t.Helper()
			asked, err := svc.Send(ctx, alice, []byte(`{"kind":"ask","body":"Which port?"}`))
			do(err)
			_, err = svc.Send(ctx, bob, []byte(`{"kind":"answer","thread":"`+asked.Thread.ID+`","body":"8080."}`))
			do(err)
			return asked.Thread.ID
		}
		thread := func(id string, more string) []byte { return []byte(`{"thread":"` + id + `"` + more + `}`) }

		undone := proposal() // confirmed, then ada's Undo: back to open
		_, err := svc.Confirm(ctx, ada, thread(undone, ""))
		do(err)
		_, err = svc.Mark(ctx, ada, thread(undone, `,"state":"open"`))
		do(err)
		furthered := proposal() // confirmed, then ada moves it on: the confirm stands
		_, err = svc.Confirm(ctx, ada, thread(furthered, ""))
		do(err)
		_, err = svc.Mark(ctx, ada, thread(furthered, `,"state":"decided"`))
		do(err)
		another := proposal() // confirmed by ada, re-marked by bea: ada's confirm stands
		_, err = svc.Confirm(ctx, ada, thread(another, ""))
		do(err)
		_, err = svc.Mark(ctx, bea, thread(another, `,"state":"open"`))
		do(err)

		reader := actor("reader", "read")
		profile, err := rep.Profile(ctx, reader, "ainotes:bob", false)
		do(err)
		if got := profile.Record.Proposals; got.Confirmed != 2 || got.Corrected != 1 || got.Open != 0 {
			t.Errorf("bob's proposals: %+v; want 2 confirmed (moved on; another human's re-mark) and 1 corrected (undone)", got)
		}
		if len(profile.Corrected) != 1 || profile.Corrected[0].Thread != undone || profile.Corrected[0].Judged != "open" ||
			profile.Corrected[0].ByID != "human:ada" {
			t.Errorf("bob's corrected proposals: %+v; want %s, judged open by human:ada", profile.Corrected, undone)
		}
		h, err := rep.Health(ctx, reader, reputation.PeriodAll)
		do(err)
		if h.Proposals.Confirmed != 2 || h.Proposals.Corrected != 1 || h.ToConfirmation.Count != 2 {
			t.Errorf("/health counts %+v with %d times to a confirmation; want 2 confirmed, 1 corrected, 2 times", h.Proposals, h.ToConfirmation.Count)
		}
	})
}
