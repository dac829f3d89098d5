package web_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage/storagetest"
)

// What the HTTP binding costs over calling the operation layer directly, on the same
// database: each iteration does both — authenticate, operate, write JSON — and the ratio
// http/operation is the measure (go test ./web -run '^$' -bench API -benchtime 2s). ns/op is
// the sum of the two.

func BenchmarkAPIReadThread(b *testing.B) {
	benchBoth(b, func(b *testing.B, f *benchForum) (operation, viaHTTP func()) {
		th, _ := f.ask(f.alice, "Which port?")
		for range 20 {
			f.send(f.bob, `{"kind":"note","thread":"`+th+`","body":"A note of some length, as notes go in a thread."}`)
		}
		input := []byte(`{"thread":"` + th + `"}`)
		return func() {
				f.direct(func(ctx context.Context) (any, error) { return f.svc.ReadThread(ctx, f.actor(f.reader), input) })
			},
			func() { f.http(http.MethodGet, "/v1/threads/"+th, f.reader, "", http.StatusOK) }
	})
}

func BenchmarkAPISend(b *testing.B) {
	benchBoth(b, func(b *testing.B, f *benchForum) (operation, viaHTTP func()) {
		th, _ := f.ask(f.alice, "Which port?")
		env := `{"kind":"note","thread":"` + th + `","body":"A note of some length, as notes go in a thread."}`
		return func() {
				f.direct(func(ctx context.Context) (any, error) { return f.svc.Send(ctx, f.actor(f.bob), []byte(env)) })
			},
			func() { f.http(http.MethodPost, "/v1/messages", f.bob, env, http.StatusCreated) }
	})
}

// BenchmarkAPIManifest needs no database: the cost of HTTP and JSON alone.
func BenchmarkAPIManifest(b *testing.B) {
	benchBoth(b, func(b *testing.B, f *benchForum) (operation, viaHTTP func()) {
		return func() { f.direct(func(context.Context) (any, error) { return f.svc.Manifest(nil), nil }) },
			func() { f.http(http.MethodGet, "/v1/manifest", "", "", http.StatusOK) }
	})
}

// benchForum is a forum for benchmarks, with a second operation layer over the same database
// to call directly. Limits are lifted so that a benchmark may write as often as it runs.
type benchForum struct {
	*forum
	svc    *protocol.Service
	client *http.Client
}

func benchBoth(b *testing.B, setup func(b *testing.B, f *benchForum) (operation, viaHTTP func())) {
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) {
			limits := protocol.DefaultLimits()
			limits.WritesPerMinute, limits.ThreadMaxMessages = math.MaxInt32, math.MaxInt32
			db := storagetest.Open(b, kind)
			f := &benchForum{forum: newForum(b, db, limits)}
			f.svc = protocol.New(db, protocol.Options{Limits: limits})
			f.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			operation, viaHTTP := setup(b, f)
			// The two alternate, so that whatever else the machine does weighs on both alike.
			var direct, overHTTP time.Duration
			for b.Loop() {
				start := time.Now()
				operation()
				mid := time.Now()
				viaHTTP()
				direct += mid.Sub(start)
				overHTTP += time.Since(mid)
			}
			b.ReportMetric(float64(direct.Nanoseconds())/float64(b.N), "operation-ns/op")
			b.ReportMetric(float64(overHTTP.Nanoseconds())/float64(b.N), "http-ns/op")
			b.ReportMetric(float64(overHTTP)/float64(direct), "http/operation")
		})
	}
}

// actor authenticates as the HTTP binding does for every request.
func (f *benchForum) actor(secret string) *protocol.Actor {
	a, err := f.svc.Authenticate(context.Background(), secret)
	if err != nil {
		panic(err)
	}
	return a
}

func (f *benchForum) direct(call func(ctx context.Context) (any, error)) {
	res, err := call(context.Background())
	if err != nil {
		panic(err)
	}
	// The HTTP side writes its answer; so does the direct side, to compare like with like.
	if _, err := json.Marshal(res); err != nil {
		panic(err)
	}
}

func (f *benchForum) http(method, target, token, body string, status int) {
	var r io.Reader = http.NoBody
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.base+target, r)
	if err != nil {
		panic(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		panic(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != status {
		panic(method + " " + target + ": " + resp.Status)
	}
}
