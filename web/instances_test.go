package web_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// Several instances on one Postgres: nothing that two instances could disagree about lives
// in one process. Two apps, each with its own connections and its own listening connection,
// start on one empty database at once (both migrate it), then: a message written through
// one reaches the other's feed and long poll, woken by the database's announcement;
// writes_per_minute holds across both; and concurrent writers on both lose nothing.
func TestTwoInstancesOnOnePostgres(t *testing.T) {
	url := storagetest.NewURL(t, storage.Postgres)
	const perMinute = 5
	limits := protocol.DefaultLimits()
	limits.WritesPerMinute = perMinute
	var dbs [2]*storage.DB
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := storage.Open(context.Background(), url)
			if err == nil {
				_, err = migrations.Up(context.Background(), db)
			}
			dbs[i] = db
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("starting an instance: %v", err)
		}
	}
	for _, db := range dbs {
		t.Cleanup(func() { db.Close() })
	}
	a := newFeedForum(t, dbs[0], web.Options{Limits: limits})
	b := &forum{t: t, db: dbs[1], logs: new(syncBuffer), alice: a.alice, bob: a.bob, reader: a.reader}
	b.app = web.New(web.Options{DB: dbs[1], Limits: limits, Version: "test"})
	b.base = serve(t, b.app)

	t.Run("feed", func(t *testing.T) {
		s := b.openFeed("/v1/feed", b.reader, "", nil).start()
		s.next() // open
		start := time.Now()
		_, msg := a.ask(a.alice, "Written through the first instance")
		ev := s.next()
		// Without the announcement the other instance would read again only after a
		// minute; the bound is generous for a busy machine, the time is logged.
		if took := time.Since(start); ev.field(t, "id") != msg || took > 5*time.Second {
			t.Fatalf("the second instance's feed got %s %s after %v", ev.event, ev.data, took)
		} else {
			t.Logf("the second instance's feed had the message %v after it was sent", took)
		}
	})

	t.Run("long poll", func(t *testing.T) {
		carol := a.token("ainotes:carol", false, "read,write", nil)
		since := b.must(b.get("/v1/inbox", carol), http.StatusOK).at("cursor")
		polled := make(chan *reply, 1)
		go func() { polled <- b.get("/v1/inbox?wait_seconds=20&since="+since, carol) }()
		time.Sleep(200 * time.Millisecond) // the poll waits
		start := time.Now()
		th, _ := a.ask(a.bob, "Anyone, through the first instance?")
		r := <-polled
		items, _ := r.json["items"].([]any)
		if took := time.Since(start); r.status != http.StatusOK || len(items) == 0 || took > 5*time.Second {
			t.Fatalf("the long poll on the second instance answered %d %s after %v, want %s", r.status, r.body, took, th)
		} else {
			t.Logf("the long poll on the second instance answered %v after the send", took)
		}
	})

	t.Run("revocation", func(t *testing.T) {
		// An instance keeps the agent tokens it has verified, and drops them when the
		// database announces a change of the tokens. A write checks its token again in its
		// own transaction, so even an instance the announcement has not reached refuses it.
		ctx := context.Background()
		th, root := a.ask(a.alice, "A thread for revoked writers")
		tokenID := func(secret string) int64 {
			tok, err := dbs[0].TokenByHash(ctx, protocol.HashTokenSecret(secret))
			if err != nil {
				t.Fatal(err)
			}
			return tok.ID
		}
		note := `{"kind":"note","thread":"` + th + `","parent":"` + root + `","body":"after the revocation"}`
		dora := a.token("ainotes:dora", false, "read,write", nil)
		for range 2 { // verified, and kept, by the second instance
			b.must(b.get("/v1/inbox", dora), http.StatusOK)
		}
		// The announcement held back: the second instance still keeps dora's token.
		if _, err := dbs[0].ExecContext(ctx, "ALTER TABLE tokens DISABLE TRIGGER tokens_announce"); err != nil {
			t.Fatal(err)
		}
		if err := dbs[0].RevokeToken(ctx, tokenID(dora)); err != nil {
			t.Fatal(err)
		}
		if _, err := dbs[0].ExecContext(ctx, "ALTER TABLE tokens ENABLE TRIGGER tokens_announce"); err != nil {
			t.Fatal(err)
		}
		if r := b.post("/v1/messages", dora, note); r.status != http.StatusUnauthorized || r.reason() != "unauthenticated" {
			t.Fatalf("a write with a revoked token, unannounced, on the other instance: %d %s", r.status, r.body)
		}
		if r := a.post("/v1/messages", dora, note); r.status != http.StatusUnauthorized || r.reason() != "unauthenticated" {
			t.Fatalf("a write with a revoked token on the revoking instance: %d %s", r.status, r.body)
		}
		if r := a.get("/v1/inbox", dora); r.status != http.StatusUnauthorized {
			t.Fatalf("a read with a revoked token on the revoking instance: %d %s", r.status, r.body)
		}
		t.Logf("a read with the revoked token, unannounced, on the other instance: %d", b.get("/v1/inbox", dora).status)

		// Announced, the revocation reaches the other instance's reads too.
		erin := a.token("ainotes:erin", false, "read,write", nil)
		for range 2 {
			b.must(b.get("/v1/inbox", erin), http.StatusOK)
		}
		if err := dbs[0].RevokeToken(ctx, tokenID(erin)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for b.get("/v1/inbox", erin).status != http.StatusUnauthorized {
			if time.Since(start) > 5*time.Second {
				t.Fatal("the other instance still reads with a token revoked 5 s ago")
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("the other instance refused the revoked token %v after the revocation", time.Since(start))
		if r := b.post("/v1/messages", erin, note); r.status != http.StatusUnauthorized {
			t.Fatalf("a write with a revoked token: %d %s", r.status, r.body)
		}
	})

	t.Run("writers on both", func(t *testing.T) {
		listen := a.openFeed("/v1/feed", a.reader, "", nil).start()
		listen.next() // open
		th, _ := a.ask(a.token("ainotes:host", false, "read,write", nil), "A thread for many writers")
		instances := []*forum{a, b}
		const writers = 8
		type sent struct {
			writer, status int
			id, reason     string
		}
		results := make(chan sent, writers*(perMinute+2)+2*perMinute)
		tokens := make([]string, writers)
		for w := range tokens {
			tokens[w] = a.token(fmt.Sprintf("ainotes:writer%d", w), false, "read,write", nil)
		}
		eager := a.token("ainotes:eager", false, "read,write", nil)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() { // each writer its budget and one more, alternating instances
				defer wg.Done()
				<-start
				for i := range perMinute + 1 {
					r := instances[(w+i)%2].post("/v1/messages", tokens[w], `{"kind":"note","thread":"`+th+`","body":"note `+fmt.Sprint(w, ".", i)+`"}`)
					results <- sent{w, r.status, r.at("message", "id"), r.reason()}
				}
			}()
		}
		for i := range 2 * perMinute { // one identity on both instances at once
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := instances[i%2].post("/v1/messages", eager, `{"kind":"note","thread":"`+th+`","body":"eager `+fmt.Sprint(i)+`"}`)
				results <- sent{-1, r.status, r.at("message", "id"), r.reason()}
			}()
		}
		close(start)
		wg.Wait()
		close(results)
		accepted := map[string]bool{}
		perWriter := map[int]int{}
		for r := range results {
			switch {
			case r.status == http.StatusCreated:
				accepted[r.id] = true
				perWriter[r.writer]++
			case r.status != http.StatusTooManyRequests || r.reason != "rate_limited":
				t.Errorf("a write was answered %d %s", r.status, r.reason)
			}
		}
		for w := -1; w < writers; w++ {
			if perWriter[w] != perMinute {
				t.Errorf("writer %d: %d writes accepted across both instances, want writes_per_minute = %d", w, perWriter[w], perMinute)
			}
		}
		if len(accepted) != (writers+1)*perMinute {
			t.Fatalf("%d distinct messages accepted, want %d", len(accepted), (writers+1)*perMinute)
		}
		thread := b.must(b.get("/v1/threads/"+th, b.reader), http.StatusOK)
		if n, _ := thread.json["thread"].(map[string]any)["message_count"].(float64); int(n) != 1+len(accepted) {
			t.Errorf("the thread counts %v messages, want %d", n, 1+len(accepted))
		}
		seen := map[string]bool{}
		for len(seen) < len(accepted)+1 { // the ask too
			ev := listen.next()
			if ev.event != "message" {
				continue
			}
			id := ev.field(t, "id")
			if seen[id] {
				t.Fatalf("the feed gave %s twice", id)
			}
			seen[id] = true
		}
		for id := range accepted {
			if !seen[id] {
				t.Errorf("the feed never gave the accepted %s", id)
			}
		}
		listen.quiet(300 * time.Millisecond)
	})
}
