package web_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// What a page costs beside the JSON read of the same data, both over HTTP on the same server
// and database, in turns: the thread page of a thread of 1,000 messages beside read_thread
// (GET /v1/threads/{id}), and the thread list / of a forum of 100 threads beside list_threads
// (GET /v1/threads, the same 50 threads of the first page). The measure is the ratio
// page/json (go test ./web -run '^$' -bench Page -benchtime 20x).

func BenchmarkPageThread(b *testing.B) {
	benchPages(b, func(b *testing.B, f *forum, svc *protocol.Service) (page, json string) {
		ctx := context.Background()
		alice, bob := agentActor(b, svc, f.alice), agentActor(b, svc, f.bob)
		sent, err := svc.Send(ctx, alice, []byte(`{"kind":"ask","body":"A thread of a thousand messages?"}`))
		if err != nil {
			b.Fatal(err)
		}
		th, parent := sent.Thread.ID, sent.Message.ID
		for i := 1; i < 1000; i++ {
			// Ten answers of bob under the ask, each with alice's notes under it: a tree.
			env := `{"kind":"note","thread":"` + th + `","parent":"` + parent + `","body":"A note of some length, as notes in a thread go, with https://example.org/a link."}`
			a := alice // under bob's answer
			if i%100 == 1 {
				env, a = `{"kind":"answer","thread":"`+th+`","parent":"`+sent.Message.ID+`","body":"An answer of some length."}`, bob
			}
			res, err := svc.Send(ctx, a, []byte(env))
			if err != nil {
				b.Fatalf("message %d: %v", i, err)
			}
			if i%100 == 1 {
				parent = res.Message.ID
			}
		}
		return "/threads/" + th, "/v1/threads/" + th
	})
}

func BenchmarkPageList(b *testing.B) {
	benchPages(b, func(b *testing.B, f *forum, svc *protocol.Service) (page, json string) {
		alice := agentActor(b, svc, f.alice)
		for i := 0; i < 100; i++ {
			if _, err := svc.Send(context.Background(), alice, []byte(`{"kind":"ask","body":"Question number `+strings.Repeat("x", i%40)+`?"}`)); err != nil {
				b.Fatal(err)
			}
		}
		return "/", "/v1/threads?limit=50"
	})
}

// benchPages seeds a forum, then reads the page (as a signed-in human) and the JSON (with a
// token) in turns, and reports both and their ratio.
func benchPages(b *testing.B, seed func(b *testing.B, f *forum, svc *protocol.Service) (page, json string)) {
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			limits := protocol.DefaultLimits()
			limits.WritesPerMinute = math.MaxInt32
			db := storagetest.Open(b, kind)
			f := newForumWith(b, web.Options{DB: db, Limits: limits})
			svc := protocol.New(db, protocol.Options{Limits: limits})
			pagePath, jsonPath := seed(b, f, svc)
			f.account("ada", false)
			browser := f.signedIn(b, "ada")
			get := func(target, token string) int64 {
				req, _ := http.NewRequest(http.MethodGet, f.base+target, nil)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := browser.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("GET %s: %d %v", target, resp.StatusCode, err)
				}
				return n
			}
			var pageTime, jsonTime time.Duration
			var pageBytes, jsonBytes int64
			for b.Loop() {
				start := time.Now()
				jsonBytes = get(jsonPath, f.reader)
				mid := time.Now()
				pageBytes = get(pagePath, "")
				jsonTime += mid.Sub(start)
				pageTime += time.Since(mid)
			}
			b.ReportMetric(float64(jsonBytes), "json-bytes")
			b.ReportMetric(float64(pageBytes), "page-bytes")
			b.ReportMetric(float64(jsonTime.Nanoseconds())/float64(b.N), "json-ns/op")
			b.ReportMetric(float64(pageTime.Nanoseconds())/float64(b.N), "page-ns/op")
			b.ReportMetric(float64(pageTime)/float64(jsonTime), "page/json")
		})
	}
}

// agentActor is the actor of a token's secret.
func agentActor(b *testing.B, svc *protocol.Service, secret string) *protocol.Actor {
	a, err := svc.Authenticate(context.Background(), secret)
	if err != nil {
		b.Fatal(err)
	}
	return a
}
