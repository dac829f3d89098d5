package protocol_test

// Benchmarks of the operation layer on both databases. They measure; they assert nothing about
// time. docs/performance.md tells how to run them and what they showed.
//
//	go run ./storage/storagetest/cmd/with-postgres -- go test -run '^$' -bench . -benchmem ./protocol/
//	PARLEY_BENCH_LARGE=1 … -bench Inbox …   (adds the forum of 1,000,000 messages)

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
)

// EnvBenchLarge, set to 1, adds the forum of 1,000,000 messages to BenchmarkInbox (seeding it
// takes a while); set to a number, it is the size of that forum instead.
const EnvBenchLarge = "PARLEY_BENCH_LARGE"

// benchAgents is the concurrency of the parallel benchmarks: 16 agents at once.
const benchAgents = 16

// perThread is how many replies a benchmark sends into one thread before it uses the next:
// far below thread_max_messages, about the size of a long conversation.
const perThread = 100

func benchService(db *storage.DB) *protocol.Service {
	limits := protocol.DefaultLimits()
	limits.WritesPerMinute = 1 << 30 // measure the writes, not the rate limit
	return protocol.New(db, protocol.Options{Limits: limits})
}

func benchAgent(i int) *protocol.Actor {
	a := &protocol.Actor{Identity: benchdata.Agent("ainotes", i)}
	a.Rights, _ = protocol.ParseRights("read,write")
	return a
}

func eachKind(b *testing.B, fn func(b *testing.B, kind storage.Kind)) {
	for _, kind := range storagetest.Kinds() {
		b.Run(string(kind), func(b *testing.B) { fn(b, kind) })
	}
}

func mustSend(b testing.TB, svc *protocol.Service, a *protocol.Actor, env string) *protocol.SendResult {
	res, err := svc.Send(context.Background(), a, []byte(env))
	if err != nil {
		b.Fatalf("%s sends %s: %v", a.Identity, env, err)
	}
	return res
}

// openThreads opens n threads by the host agent 0 and returns their thread and root keys.
func openThreads(b testing.TB, svc *protocol.Service, n int) (threads, roots []string) {
	host := benchAgent(0)
	for i := 0; i < n; i++ {
		res := mustSend(b, svc, host, fmt.Sprintf(`{"kind":"ask","body":"Benchmark question %d: which limit applies?"}`, i))
		threads, roots = append(threads, res.Thread.ID), append(roots, res.Message.ID)
	}
	return threads, roots
}

// replyEnvelope is an answer or note under a thread's ask: the parent is named, so replies by
// anyone but the asker are never self replies, and the tree stays one level deep.
func replyEnvelope(kind, thread, root string, i int) []byte {
	return []byte(`{"kind":"` + kind + `","thread":"` + thread + `","parent":"` + root +
		`","body":"Benchmark ` + kind + ` ` + strconv.Itoa(i) + `: ` + benchdata.Filler + `"}`)
}

// BenchmarkSend sends one envelope per operation, one sender at a time: an ask that opens a
// thread, or an answer or note into a thread that exists (up to perThread per thread).
func BenchmarkSend(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		b.Run("ask", func(b *testing.B) {
			svc := benchService(storagetest.Open(b, kind))
			agents := []*protocol.Actor{benchAgent(1), benchAgent(2), benchAgent(3), benchAgent(4)}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				env := []byte(`{"kind":"ask","body":"Benchmark question ` + strconv.Itoa(i) + `: which limit applies?"}`)
				if _, err := svc.Send(ctx, agents[i%len(agents)], env); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, kindOfReply := range []string{"answer", "note"} {
			b.Run(kindOfReply, func(b *testing.B) {
				svc := benchService(storagetest.Open(b, kind))
				threads, roots := openThreads(b, svc, b.N/perThread+1)
				agents := []*protocol.Actor{benchAgent(1), benchAgent(2), benchAgent(3), benchAgent(4)}
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := i / perThread
					if _, err := svc.Send(ctx, agents[i%len(agents)], replyEnvelope(kindOfReply, threads[t], roots[t], i)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

// BenchmarkSendParallel is 16 agents sending at once, a conversation's mix: of every eight
// messages one ask opening a thread, six answers and one note into threads that others
// opened. "service" sends through the operation layer; "direct" issues the same inserts and
// updates straight through the driver (benchdata.Direct). "ratio" runs both in turns, bursts
// of 16 × 16 messages each, and reports their throughputs and service/direct: the share of
// the driver's throughput the operation layer keeps, measured side by side so that the load
// of the machine weighs on both alike.
func BenchmarkSendParallel(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		b.Run("service", func(b *testing.B) {
			s := newServiceMix(b, storagetest.Open(b, kind))
			s.prepare(b, b.N)
			b.ReportAllocs()
			runParallel(b, s)
		})
		b.Run("direct", func(b *testing.B) {
			d := newDirectMix(b, kind)
			d.prepare(b, b.N)
			b.ReportAllocs()
			runParallel(b, d)
		})
		// ratio runs with benchAgents agents; ratio/agents=1 and ratio/agents=4 with one and
		// four, where a database that takes one writer at a time (SQLite) is not yet saturated.
		ratio := func(b *testing.B, agents int) {
			s := newServiceMix(b, storagetest.Open(b, kind))
			d := newDirectMix(b, kind)
			burst := benchAgents * 16
			var serviceTime, directTime time.Duration
			for i := 0; i < b.N; i++ {
				s.prepare(b, (i+1)*burst)
				d.prepare(b, (i+1)*burst)
				serviceTime += runBurst(b, s, agents, i*burst, burst)
				directTime += runBurst(b, d, agents, i*burst, burst)
			}
			sends := float64(b.N * burst)
			b.ReportMetric(sends/serviceTime.Seconds(), "service-sends/s")
			b.ReportMetric(sends/directTime.Seconds(), "direct-sends/s")
			b.ReportMetric(directTime.Seconds()/serviceTime.Seconds(), "service/direct")
		}
		b.Run("ratio", func(b *testing.B) { ratio(b, benchAgents) })
		for _, agents := range []int{1, 4} {
			b.Run("ratio/agents="+strconv.Itoa(agents), func(b *testing.B) { ratio(b, agents) })
		}
		// scoped is service with every agent's token scoped to the room general (§ 16), where
		// every thread is: each send checks the room. scoped-ratio runs the unscoped and the
		// scoped agents in turns, each on a forum of its own, and reports scoped/unscoped.
		b.Run("scoped", func(b *testing.B) {
			s := newServiceMix(b, storagetest.Open(b, kind)).scoped()
			s.prepare(b, b.N)
			b.ReportAllocs()
			runParallel(b, s)
		})
		b.Run("scoped-ratio", func(b *testing.B) {
			variantRatio(b, kind, "scoped", (*serviceMix).scoped)
		})
		// keyed-ratio: every send with an idempotency key of its own (PROTOCOL.md § 15), as a
		// careful client sends it, in turns with sends without one; reports keyed/unkeyed.
		b.Run("keyed-ratio", func(b *testing.B) {
			variantRatio(b, kind, "keyed", (*serviceMix).keyed)
		})
	})
}

// variantRatio runs the plain mix and the variant's in turns, each on a forum of its own, and
// reports both throughputs and variant/plain (of the time taken: above 1 the variant costs more).
func variantRatio(b *testing.B, kind storage.Kind, name string, variant func(*serviceMix) *serviceMix) {
	plain := newServiceMix(b, storagetest.Open(b, kind))
	other := variant(newServiceMix(b, storagetest.Open(b, kind)))
	burst := benchAgents * 16
	var plainTime, otherTime time.Duration
	for i := 0; i < b.N; i++ {
		plain.prepare(b, (i+1)*burst)
		other.prepare(b, (i+1)*burst)
		// Each goes first every other turn, as the inbox's reads do.
		if i%2 == 0 {
			plainTime += runBurst(b, plain, benchAgents, i*burst, burst)
			otherTime += runBurst(b, other, benchAgents, i*burst, burst)
		} else {
			otherTime += runBurst(b, other, benchAgents, i*burst, burst)
			plainTime += runBurst(b, plain, benchAgents, i*burst, burst)
		}
	}
	sends := float64(b.N * burst)
	b.ReportMetric(sends/plainTime.Seconds(), "un"+name+"-sends/s")
	b.ReportMetric(sends/otherTime.Seconds(), name+"-sends/s")
	b.ReportMetric(otherTime.Seconds()/plainTime.Seconds(), name+"/un"+name)
}

// scopedAgent is benchAgent(i) with its token scoped to the room general.
func scopedAgent(i int) *protocol.Actor {
	a := benchAgent(i)
	a.Rooms = []int64{storage.GeneralRoom}
	return a
}

// mix is one way of sending the benchmark's conversation mix.
type mix interface {
	// prepare opens enough threads, untimed, for the first n messages of the mix.
	prepare(b *testing.B, n int)
	// send sends the mix's n-th message as the given agent.
	send(ctx context.Context, agent, n int) error
}

// mixKind is the kind of the mix's n-th message.
func mixKind(n int) string {
	switch n % 8 {
	case 0:
		return "ask"
	case 7:
		return "note"
	}
	return "answer"
}

// threadsFor is how many threads the first n messages of the mix go into.
func threadsFor(n int) int { return n/perThread + benchAgents }

// runParallel sends b.N messages of the mix from benchAgents goroutines, one agent each, and
// reports the throughput.
func runParallel(b *testing.B, m mix) {
	var next, agents atomic.Int64
	ctx := context.Background()
	b.SetParallelism(parallelism())
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		me := int(agents.Add(1))
		for pb.Next() {
			if err := m.send(ctx, me, int(next.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
}

// runBurst sends the messages first+1 … first+n of the mix from the given number of agents,
// one goroutine each, and returns the time they took.
func runBurst(b *testing.B, m mix, agents, first, n int) time.Duration {
	var next atomic.Int64
	next.Store(int64(first))
	ctx := context.Background()
	began := time.Now()
	var wg sync.WaitGroup
	for a := 1; a <= agents; a++ {
		wg.Go(func() {
			for k := int(next.Add(1)); k <= first+n; k = int(next.Add(1)) {
				if err := m.send(ctx, a, k); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(began)
}

// serviceMix sends the mix through the operation layer.
type serviceMix struct {
	svc            *protocol.Service
	threads, roots []string
	agents         []*protocol.Actor
	keys           bool // every send under an idempotency key of its own
}

func newServiceMix(b *testing.B, db *storage.DB) *serviceMix {
	s := &serviceMix{svc: benchService(db)}
	for i := 0; i <= benchAgents; i++ {
		s.agents = append(s.agents, benchAgent(i))
	}
	return s
}

// scoped makes the mix's senders scoped to the room general (the host, who opens the
// threads beforehand, stays as it is).
func (s *serviceMix) scoped() *serviceMix {
	for i := 1; i < len(s.agents); i++ {
		s.agents[i] = scopedAgent(i)
	}
	return s
}

// keyed makes the mix send every message under an idempotency key of its own.
func (s *serviceMix) keyed() *serviceMix {
	s.keys = true
	return s
}

func (s *serviceMix) prepare(b *testing.B, n int) {
	if more := threadsFor(n) - len(s.threads); more > 0 {
		threads, roots := openThreads(b, s.svc, more)
		s.threads, s.roots = append(s.threads, threads...), append(s.roots, roots...)
	}
}

func (s *serviceMix) send(ctx context.Context, agent, n int) error {
	var env []byte
	t := n % len(s.threads)
	if kind := mixKind(n); kind == "ask" {
		env = []byte(`{"kind":"ask","body":"Parallel question ` + strconv.Itoa(n) + `: which limit applies?"}`)
	} else {
		env = replyEnvelope(kind, s.threads[t], s.roots[t], n)
	}
	if s.keys {
		a := s.agents[agent]
		_, err := s.svc.Idempotently(ctx, a, "bench-"+strconv.Itoa(n), "send", env, func(ctx context.Context) (any, error) {
			return s.svc.Send(ctx, a, env)
		})
		return err
	}
	_, err := s.svc.Send(ctx, s.agents[agent], env)
	return err
}

// directMix issues the same writes straight through the driver.
type directMix struct {
	d        *benchdata.Direct
	threads  []benchdata.DirectThread
	answered []*atomic.Bool
}

// newDirectMix connects the baseline to a fresh, migrated database of the kind.
func newDirectMix(b *testing.B, kind storage.Kind) *directMix {
	ctx := context.Background()
	url := storagetest.NewURL(b, kind)
	db, err := storage.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	_, err = migrations.Up(ctx, db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	d, err := benchdata.OpenDirect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return &directMix{d: d}
}

func (m *directMix) prepare(b *testing.B, n int) {
	for len(m.threads) < threadsFor(n) {
		th, err := m.d.Ask(context.Background(), benchdata.Agent("ainotes", 0),
			fmt.Sprintf("Benchmark question %d: which limit applies?", len(m.threads)))
		if err != nil {
			b.Fatal(err)
		}
		m.threads, m.answered = append(m.threads, th), append(m.answered, new(atomic.Bool))
	}
}

func (m *directMix) send(ctx context.Context, agent, n int) error {
	me := benchdata.Agent("ainotes", agent)
	t := n % len(m.threads)
	body := "Benchmark " + strconv.Itoa(n) + ": " + benchdata.Filler
	switch kind := mixKind(n); kind {
	case "ask":
		_, err := m.d.Ask(ctx, me, "Parallel question "+strconv.Itoa(n)+": which limit applies?")
		return err
	case "note":
		return m.d.Reply(ctx, m.threads[t], kind, me, body, "", "")
	default:
		from, to := "", ""
		if !m.answered[t].Swap(true) {
			from, to = "open", "answered" // the first answer proposes answered
		}
		return m.d.Reply(ctx, m.threads[t], kind, me, body, from, to)
	}
}

// parallelism makes RunParallel start benchAgents goroutines whatever GOMAXPROCS is.
func parallelism() int {
	procs := runtime.GOMAXPROCS(0)
	return (benchAgents + procs - 1) / procs
}

// BenchmarkReadThread reads a whole thread, its tree of messages and claims, of 10 and of 200
// messages: an ask with answers and notes under it, and answers to answers.
func BenchmarkReadThread(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		svc := benchService(storagetest.Open(b, kind))
		for _, size := range []int{10, 200} {
			thread := conversation(b, svc, size)
			b.Run(strconv.Itoa(size), func(b *testing.B) {
				reader := benchAgent(99)
				req := []byte(`{"thread":"` + thread + `"}`)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					res, err := svc.ReadThread(ctx, reader, req)
					if err != nil || res.Thread.MessageCount != size {
						b.Fatalf("read: %v, %+v", err, res)
					}
				}
			})
		}
	})
}

// conversation sends a thread of size messages: agent 0 asks; the others take turns with an
// answer to the latest answer (every fourth message, so the tree has depth), else an answer or
// a note under the ask.
func conversation(b *testing.B, svc *protocol.Service, size int) string {
	threads, roots := openThreads(b, svc, 1)
	thread, parent := threads[0], roots[0]
	for i := 1; i < size; i++ {
		a := benchAgent(1 + i%5)
		switch {
		case i%4 == 0:
			res := mustSend(b, svc, a, string(replyEnvelope("answer", thread, parent, i)))
			parent = res.Message.ID
		case i%2 == 0:
			mustSend(b, svc, a, string(replyEnvelope("note", thread, roots[0], i)))
		default:
			res := mustSend(b, svc, a, string(replyEnvelope("answer", thread, roots[0], i)))
			if i == 1 {
				parent = res.Message.ID
			}
		}
	}
	return thread
}

// The inbox benchmark: a forum seeded in bulk, read by one agent that has caught up, after a
// few new messages. A read of what is new should cost the same whatever the forum's size.

// inboxReader is the agent whose inbox the benchmark reads: the asker of every thousandth
// seeded thread, and an agent every unanswered thread is open to.
const inboxReader = 7

// inboxForum is a seeded forum with the reader's cursor from before the new messages.
type inboxForum struct {
	svc    *protocol.Service
	cursor []byte // the request {"since": …}
	// scopedCursor is the request of the reader's token scoped to general: a cursor belongs
	// to its reader's list, rooms and all (§ 19).
	scopedCursor []byte
	items        int // what a read returns
	// plainSecret and scopedSecret are the reader's tokens, one reaching every room and one
	// scoped to the room general (where every thread is), for reads that authenticate as a
	// request does.
	plainSecret, scopedSecret string
}

// newInboxForum seeds a forum of the given size into a fresh database and sends the new
// messages: three asks open to anyone, an answer and an ask for the reader, and five answers
// elsewhere that are not the reader's.
func newInboxForum(b *testing.B, kind storage.Kind, messages int) *inboxForum {
	ctx := context.Background()
	db := storagetest.Open(b, kind)
	forum := benchdata.Forum{Messages: messages}
	began := time.Now()
	if _, err := benchdata.Seed(ctx, db, forum); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d messages on %s in %v", messages, kind, time.Since(began).Round(time.Millisecond))
	svc := benchService(db)
	reader := benchAgent(inboxReader)

	// Catch up, as an agent does: page until nothing more, once the seed is behind the read
	// horizon (other transactions on the same Postgres server can hold it back); the scoped
	// token of the same reader as well, for its own cursor.
	awaitHorizon(b, db)
	plainSecret, scopedSecret := readerToken(b, db, ""), readerToken(b, db, strconv.FormatInt(storage.GeneralRoom, 10))
	scopedReader, err := svc.Authenticate(ctx, scopedSecret)
	if err != nil {
		b.Fatal(err)
	}
	cursor, scopedCursor := caughtUpInbox(b, svc, reader), caughtUpInbox(b, svc, scopedReader)

	for i := 1; i <= 3; i++ {
		mustSend(b, svc, benchAgent(100+i), `{"kind":"ask","body":"A new question `+strconv.Itoa(i)+`"}`)
	}
	// Thread 8 is the reader's own ask, answered: a new answer awaits the reader again. Message
	// 8 is the reader's note in thread 1: an ask under it is directed at the reader.
	mustSend(b, svc, benchAgent(200), `{"kind":"answer","thread":"th_8","body":"A new answer."}`)
	mustSend(b, svc, benchAgent(200), `{"kind":"ask","parent":"msg_8","body":"A question for the reader."}`)
	for k := 21; k <= 25; k++ {
		mustSend(b, svc, benchAgent(300), `{"kind":"answer","thread":"th_`+strconv.Itoa(k)+`","body":"Not for the reader."}`)
	}
	awaitHorizon(b, db)
	f := &inboxForum{svc: svc, cursor: []byte(`{"since":"` + cursor + `"}`), scopedCursor: []byte(`{"since":"` + scopedCursor + `"}`),
		plainSecret: plainSecret, scopedSecret: scopedSecret}
	res, err := svc.Inbox(ctx, reader, f.cursor)
	if err != nil {
		b.Fatal(err)
	}
	f.items = len(res.Items)
	if f.items != 5 {
		b.Fatalf("the reader sees %d new items, want 5: %+v", f.items, res.Items)
	}
	return f
}

// caughtUpInbox pages a's inbox until nothing more and answers the cursor there.
func caughtUpInbox(b *testing.B, svc *protocol.Service, a *protocol.Actor) string {
	b.Helper()
	cursor := ""
	for {
		req := `{"limit":100}`
		if cursor != "" {
			req = `{"limit":100,"since":"` + cursor + `"}`
		}
		res, err := svc.Inbox(context.Background(), a, []byte(req))
		if err != nil {
			b.Fatal(err)
		}
		cursor = res.Cursor
		if !res.More {
			return cursor
		}
	}
}

func awaitHorizon(b *testing.B, db *storage.DB) {
	b.Helper()
	if err := db.AwaitHorizon(context.Background(), time.Minute); err != nil {
		b.Fatal(err)
	}
}

func (f *inboxForum) read(b *testing.B) { f.readAs(b, benchAgent(inboxReader)) }

// readAs reads the reader's inbox as the actor a: the reader, scoped or not, each from its
// own cursor.
func (f *inboxForum) readAs(b *testing.B, a *protocol.Actor) {
	in := f.cursor
	if a.Scoped() {
		in = f.scopedCursor
	}
	res, err := f.svc.Inbox(context.Background(), a, in)
	if err != nil || len(res.Items) != f.items {
		b.Fatalf("inbox: %v, %d items, want %d", err, len(res.Items), f.items)
	}
}

// timed is how long fn takes.
func timed(fn func()) time.Duration {
	t0 := time.Now()
	fn()
	return time.Since(t0)
}

// readerToken stores a token of the inbox's reader, scoped to rooms ("" for every room),
// and returns its secret.
func readerToken(b *testing.B, db *storage.DB, rooms string) string {
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		b.Fatal(err)
	}
	_, err = db.CreateToken(context.Background(), storage.NewToken{Identity: benchAgent(inboxReader).Identity,
		SecretHash: protocol.HashTokenSecret(secret), Rights: "read,write", Rooms: rooms})
	if err != nil {
		b.Fatal(err)
	}
	return secret
}

// readWith authenticates with the secret and reads the reader's inbox, as a request does.
func (f *inboxForum) readWith(b *testing.B, secret string) {
	a, err := f.svc.Authenticate(context.Background(), secret)
	if err != nil {
		b.Fatal(err)
	}
	f.readAs(b, a)
}

// largeForum is the size of the large forum, 0 when EnvBenchLarge does not ask for it.
func largeForum(b *testing.B) int {
	v := os.Getenv(EnvBenchLarge)
	switch v {
	case "", "0":
		return 0
	case "1":
		return 1_000_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 10_000 {
		b.Fatalf("%s=%q: want 1 or a number of messages of at least 10000", EnvBenchLarge, v)
	}
	return n
}

func sizeName(n int) string {
	switch {
	case n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// BenchmarkInbox reads the inbox with a since-cursor that a few new items follow, in a forum
// of 10,000 messages and (with PARLEY_BENCH_LARGE=1) one of 1,000,000. "ratio" reads both
// forums in turns and reports each one's time per read and large/small: the growth of a
// read's cost with the forum, measured side by side.
func BenchmarkInbox(b *testing.B) {
	eachKind(b, func(b *testing.B, kind storage.Kind) {
		small := newInboxForum(b, kind, 10_000)
		b.Run("10k", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				small.read(b)
			}
		})
		// scoped reads the same inbox as a reader whose token is scoped to the room general,
		// where every thread is: the read checks the room of every item. 10k-scoped-ratio reads
		// it with an unscoped and a scoped token in turns, each authenticated as a request is,
		// and reports scoped/unscoped.
		b.Run("10k-scoped", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				small.readWith(b, small.scopedSecret)
			}
		})
		b.Run("10k-scoped-ratio", func(b *testing.B) {
			var plainNs, scopedNs time.Duration
			// Each goes first every other turn: the second read of a turn finds the caches
			// as the first left them.
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					plainNs += timed(func() { small.readWith(b, small.plainSecret) })
					scopedNs += timed(func() { small.readWith(b, small.scopedSecret) })
				} else {
					scopedNs += timed(func() { small.readWith(b, small.scopedSecret) })
					plainNs += timed(func() { small.readWith(b, small.plainSecret) })
				}
			}
			b.ReportMetric(float64(plainNs.Nanoseconds())/float64(b.N), "unscoped-ns/read")
			b.ReportMetric(float64(scopedNs.Nanoseconds())/float64(b.N), "scoped-ns/read")
			b.ReportMetric(float64(scopedNs)/float64(plainNs), "scoped/unscoped")
		})
		n := largeForum(b)
		if n == 0 {
			b.Logf("set %s=1 for the forum of 1,000,000 messages", EnvBenchLarge)
			return
		}
		large := newInboxForum(b, kind, n)
		b.Run(sizeName(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				large.read(b)
			}
		})
		b.Run("ratio", func(b *testing.B) {
			var smallNs, largeNs time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				small.read(b)
				t1 := time.Now()
				large.read(b)
				smallNs += t1.Sub(t0)
				largeNs += time.Since(t1)
			}
			b.ReportMetric(float64(smallNs.Nanoseconds())/float64(b.N), "10k-ns/read")
			b.ReportMetric(float64(largeNs.Nanoseconds())/float64(b.N), sizeName(n)+"-ns/read")
			b.ReportMetric(float64(largeNs)/float64(smallNs), sizeName(n)+"/10k")
		})
	})
}
