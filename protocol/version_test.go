package protocol_test

import (
	"context"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Every operation's input takes the optional "parley": "1", and refuses any other version.
func TestEveryOperationTakesTheVersion(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		svc := newService(t, db)
		alice, mod := agent("alice", "read,write"), agent("mod", "read,write,lock")
		th := send(t, svc, alice, `{"parley":"1","kind":"ask","body":"Version?"}`).Thread.ID
		ops := []struct {
			name  string
			actor *protocol.Actor
			call  func(ctx context.Context, a *protocol.Actor, raw []byte) error
			input string
		}{
			{"read_thread", alice, func(ctx context.Context, a *protocol.Actor, raw []byte) error {
				_, err := svc.ReadThread(ctx, a, raw)
				return err
			}, `"thread":"` + th + `"`},
			{"list_threads", alice, func(ctx context.Context, a *protocol.Actor, raw []byte) error {
				_, err := svc.ListThreads(ctx, a, raw)
				return err
			}, `"limit":5`},
			{"read_events", alice, func(ctx context.Context, a *protocol.Actor, raw []byte) error {
				_, err := svc.ReadEvents(ctx, a, raw)
				return err
			}, `"thread":"` + th + `"`},
			{"inbox", alice, func(ctx context.Context, a *protocol.Actor, raw []byte) error {
				_, err := svc.Inbox(ctx, a, raw)
				return err
			}, `"limit":5`},
			{"get_manifest", nil, func(ctx context.Context, a *protocol.Actor, raw []byte) error {
				_, err := svc.GetManifest(ctx, a, raw)
				return err
			}, ``},
			{"confirm", mod, func(ctx context.Context, a *protocol.Actor, raw []byte) error {
				_, err := svc.Confirm(ctx, a, raw)
				return err
			}, `"thread":"` + th + `"`},
		}
		for _, op := range ops {
			sep := ""
			if op.input != "" {
				sep = ","
			}
			err := op.call(ctx, op.actor, []byte(`{"parley":"2"`+sep+op.input+`}`))
			if e := wantRefused(t, err, protocol.ReasonInvalidBody); e.Message == "" {
				t.Errorf("%s: parley 2 refused without a message", op.name)
			}
			err = op.call(ctx, op.actor, []byte(`{"parley":"1"`+sep+op.input+`}`))
			if e, ok := protocol.AsError(err); ok && e.Reason == protocol.ReasonInvalidBody {
				t.Errorf("%s: parley 1 refused: %v", op.name, err)
			}
		}
	})
}

// A write that has begun is carried to its end even when its caller goes away.
func TestWritesOutliveTheirCaller(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := svc.Send(ctx, agent("alice", "read,write"), []byte(`{"kind":"ask","body":"Still written?"}`))
		if err != nil {
			t.Fatalf("a cancelled caller's send: %v", err)
		}
		if got := thread(t, svc, res.Thread.ID); got.MessageCount != 1 {
			t.Fatalf("the thread after a cancelled caller's send: %+v", got)
		}
	})
}
