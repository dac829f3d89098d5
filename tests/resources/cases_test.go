//go:build resources

package resources

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/storage"
)

// measured are the rows of case c in the order they are measured: the light ones first, so
// that only a heavy row, measured on a process that may just have started, follows a heavy
// one (server.settle).
func (m *matrix) measured(c string) []row {
	var light, heavy []row
	for _, r := range m.rows {
		switch {
		case !r.runs(c):
		case r.class.Heavy():
			heavy = append(heavy, r)
		default:
			light = append(light, r)
		}
	}
	return append(light, heavy...)
}

// checkTimes holds the answers of callers that read at once to the deadlines.
func (m *matrix) checkTimes(r row, c string, answers []answer) {
	m.t.Helper()
	for _, a := range answers {
		if a.status != 0 && a.first > deadline+slack {
			m.fail(r, c, "the first byte of the answer came after %.1f s, bound %.0f s", a.first.Seconds(), (deadline + slack).Seconds())
		}
		if a.held > heldBound(r.class) {
			m.fail(r, c, "held its connection %.1f s, bound %.0f s", a.held.Seconds(), heldBound(r.class).Seconds())
		}
	}
}

// checkPage holds an answer that is not an export to one page (§ 19).
func (m *matrix) checkPage(r row, req request, a answer) {
	m.t.Helper()
	bound := int64(pageMaxBytes)
	if req.target == "/mcp" {
		bound = mcpAnswerMaxBytes
	}
	if r.class != admission.Export && a.bytes > bound {
		m.fail(r, caseAlone, "answered %.1f MB, bound %.0f MB (one page)", float64(a.bytes)/(1<<20), float64(bound)/(1<<20))
	}
}

func (m *matrix) checkMemory(r row, c string, g growth, n int, answers []answer) {
	m.t.Helper()
	m.cell(r, c).memory = &g
	if bound := memoryBoundMB(r.class, n); g.killed || g.MB > bound {
		var sent int64
		for _, a := range answers {
			sent = max(sent, a.bytes)
		}
		m.fail(r, c, "the server grew by %v for %d caller(s), bound %.0f MB (%.1f MB per caller; the largest answer %.1f MB)",
			g, n, bound, g.MB/float64(n), float64(sent)/(1<<20))
	}
}

// slowRow notes a row that took long to measure, for the matrix's own running time.
func (m *matrix) slowRow(r row, c string, began time.Time) {
	if took := time.Since(began); took > 3*time.Second {
		m.t.Logf("%s: %s, %s took %.1f s to measure", m.f.kind, r.name, c, took.Seconds())
	}
}

// (a) Every row alone, once, on the largest forum.
func (m *matrix) runAlone() {
	for _, r := range m.measured(caseAlone) {
		m.s.settle() // a process that runs, for the callers who sign in first
		c := m.f.callerOf(m.t, m.s, r.who, 0)
		req := r.make(m.f, c)
		var a answer
		began := time.Now()
		g := m.s.measure(func() { a = m.s.exchange(c, req, readsAtOnce, answerLimit) })
		m.slowRow(r, caseAlone, began)
		m.alone[r.name] = a
		m.record(r, caseAlone, []answer{a})
		m.checkTimes(r, caseAlone, []answer{a})
		m.checkPage(r, req, a)
		m.checkMemory(r, caseAlone, g, 1, []answer{a})
	}
}

// (b) Every row by ten callers of its kind at once: its growth may rise with them only as
// far as its class lets work run at once (its slots).
func (m *matrix) runTogether() {
	for _, r := range m.measured(caseTogether) {
		m.s.settle()
		callers := make([]caller, together)
		reqs := make([]request, together)
		for i := range callers {
			callers[i] = m.f.callerOf(m.t, m.s, r.who, i)
			reqs[i] = r.make(m.f, callers[i])
		}
		answers := make([]answer, together)
		began := time.Now()
		g := m.s.measure(func() {
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() { answers[i] = m.s.exchange(callers[i], reqs[i], readsAtOnce, answerLimit) })
			}
			wg.Wait()
		})
		m.slowRow(r, caseTogether, began)
		m.record(r, caseTogether, answers)
		m.checkTimes(r, caseTogether, answers)
		m.checkMemory(r, caseTogether, g, together, answers)
	}
}

// slowlyRead reports whether a slow reader of r means anything: its answer alone was more
// than the system's buffers take off the server at once, or it is an export or a drawing.
func (m *matrix) slowlyRead(r row) bool {
	return r.runs(caseSlowReader) && (m.alone[r.name].bytes > 1<<20 || r.class == admission.Export || r.class == admission.Drawing)
}

// (c) At once: a slow reader of every large answer, reading at 4 KiB/s, and a slow writer of
// every row, writing a byte a second. The server lets each reader go within § 19's cut-off
// of its becoming slow, and each writer within its read deadline; in all it grows by no more
// than the readers' rows alone and a page of buffers for each writer.
func (m *matrix) runSlow() {
	type slow struct {
		r    row
		c    caller
		req  request
		mode mode
	}
	m.s.restart()
	var calls []slow
	bound, readers := float64(baseMB), 0
	for _, r := range m.rows {
		if m.slowlyRead(r) {
			c := m.f.callerOf(m.t, m.s, r.who, readers%callersPerKind)
			calls = append(calls, slow{r, c, r.make(m.f, c), slowReader})
			bound += memoryBoundMB(r.class, 1) - baseMB
			readers++
		}
	}
	for _, r := range m.rows {
		if r.runs(caseSlowWriter) {
			c := m.f.callerOf(m.t, m.s, r.who, callersPerKind-3)
			calls = append(calls, slow{r, c, r.make(m.f, c), slowWriter})
			bound += slowWriterMB
		}
	}
	answers := make([]answer, len(calls))
	g := m.s.measure(func() {
		var wg sync.WaitGroup
		for i, call := range calls {
			limit := slowReadLimit
			if call.mode == slowWriter {
				limit = slowWriteLimit
			}
			wg.Go(func() { answers[i] = m.s.exchange(call.c, call.req, call.mode, limit) })
		}
		wg.Wait()
	})
	for i, call := range calls {
		a := answers[i]
		if call.mode == slowReader {
			m.record(call.r, caseSlowReader, []answer{a})
			if a.held > deadline+cutAfter+slack {
				m.fail(call.r, caseSlowReader, "the server held a slow reader %.1f s (%d bytes sent), bound %.0f s",
					a.held.Seconds(), a.bytes, (deadline + cutAfter + slack).Seconds())
			}
			continue
		}
		if a.status == 0 && a.held < slowWriteLimit {
			a.closed = true // closed without an answer: let go
		}
		m.record(call.r, caseSlowWriter, []answer{a})
		if a.held > readTimeout+slack {
			m.fail(call.r, caseSlowWriter, "the server held a slow writer %.1f s, bound %.0f s (the read deadline)",
				a.held.Seconds(), (readTimeout + slack).Seconds())
		}
	}
	m.phase("slow readers and writers", g, bound, fmt.Sprintf("%d slow readers, %d slow writers at once", readers, len(calls)-readers))
}

// besideAtOnce is how many of the rest of the forum's reads run at once beside the exports.
const besideAtOnce = 4

// The rest of the forum while every export slot is held by a slow reader of the JSON lines
// export (issue 35's fourth defect): every light read that answered 2xx alone answers 2xx
// within restWithin.
func (m *matrix) runBesideSlowExports() {
	slots := gate.Capacity(admission.Export)
	m.s.restart()
	var rest []row
	callers := map[string]caller{}
	for _, r := range m.rows {
		alone := m.alone[r.name]
		if r.runs(caseBeside) && r.class == admission.Read && alone.status >= 200 && alone.status <= 299 && !r.make(m.f, caller{}).stream {
			rest = append(rest, r)
			callers[r.name] = m.f.callerOf(m.t, m.s, r.who, callersPerKind-2)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range slots {
		holder := m.f.callerOf(m.t, m.s, reader, i/2) // each reader holds its share of two
		wg.Go(func() {
			// A holder cut off opens its export again, so that the slots stay held.
			for ctx.Err() == nil {
				m.s.exchangeUntil(ctx, holder, request{method: http.MethodGet, target: "/v1/export?format=jsonl"}, slowReader, slowReadLimit)
			}
		})
	}
	time.Sleep(time.Second) // the exports take their slots
	// The rest read besideAtOnce at a time: a few readers of the forum, not a crowd.
	answers := make([]answer, len(rest))
	for first := 0; first < len(rest); first += besideAtOnce {
		var group sync.WaitGroup
		for i := first; i < min(first+besideAtOnce, len(rest)); i++ {
			c := callers[rest[i].name]
			req := rest[i].make(m.f, c)
			group.Go(func() { answers[i] = m.s.exchange(c, req, readsAtOnce, answerLimit) })
		}
		group.Wait()
	}
	for i, r := range rest {
		a := answers[i]
		m.record(r, caseBeside, []answer{a})
		if a.status < 200 || a.status > 299 || a.held > restWithin {
			m.fail(r, caseBeside, "answered %d after %.1f s while every export slot (%d) was held by a slow reader; alone %d; bound 2xx within %.0f s",
				a.status, a.held.Seconds(), slots, m.alone[r.name].status, restWithin.Seconds())
		}
	}
	stop()
	wg.Wait()
}

// (d) Every row at once with the database hung: on Postgres nothing answers (a proxy that
// forwards nothing), on SQLite another connection holds the write lock. Every route answers
// within the deadline, a 2xx only with its whole answer.
func (m *matrix) runHung() {
	type call struct {
		r   row
		c   caller
		req request
	}
	m.s.restart()
	var calls []call
	next := map[callerKind]int{} // each row its own caller: no share of another row's
	for _, r := range m.rows {
		if r.runs(caseHung) {
			c := m.f.callerOf(m.t, m.s, r.who, next[r.who]%callersPerKind)
			next[r.who]++
			calls = append(calls, call{r, c, r.make(m.f, c)})
		}
	}
	// The callers' tokens are checked once before the hang, as an agent at work has had
	// them checked: what hangs then is the row's own work, not the token's check.
	for _, call := range calls {
		if call.c.authorization != "" {
			m.s.exchange(call.c, request{method: http.MethodGet, target: "/v1/manifest"}, readsAtOnce, answerLimit)
		}
	}
	release := m.f.hang(m.t)
	answers := make([]answer, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { answers[i] = m.s.exchange(call.c, call.req, readsAtOnce, hungAnswerLimit) })
	}
	wg.Wait()
	release()
	for i, call := range calls {
		r, a, alone := call.r, answers[i], m.alone[call.r.name]
		m.record(r, caseHung, []answer{a})
		if a.status == 0 {
			continue
		}
		whole := a.status < 200 || a.status > 299 || call.req.stream || r.degrades || a.bytes >= alone.bytes*9/10
		switch {
		case a.first > deadline+slack:
			m.fail(r, caseHung, "the first byte came after %.1f s, bound %.0f s", a.first.Seconds(), (deadline + slack).Seconds())
		case !whole:
			m.fail(r, caseHung, "answered %d with %d bytes; alone it answered %d bytes", a.status, a.bytes, alone.bytes)
		case a.held > heldBound(r.class):
			m.fail(r, caseHung, "held its connection %.1f s, bound %.0f s", a.held.Seconds(), heldBound(r.class).Seconds())
		}
	}
	m.s.recovered()
}

// hang makes the database hang for parley serve, until the returned function is called.
func (f *forum) hang(t *testing.T) (release func()) {
	t.Helper()
	if f.kind == storage.Postgres {
		f.proxy.Freeze()
		return f.proxy.Thaw
	}
	conn, err := f.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(context.Background(), nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(); conn.Close() }
}

// recovered waits until the server answers again after the database came back.
func (s *server) recovered() {
	for range 60 {
		a := s.exchange(caller{}, request{method: http.MethodGet, target: "/healthz"}, readsAtOnce, 10*time.Second)
		if a.status == http.StatusOK {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.t.Errorf("the server did not answer /healthz with 200 within 30 s of the database's return")
}
