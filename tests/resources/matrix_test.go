//go:build resources

package resources

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage/storagetest"
)

// The cases of the matrix, in the order of the table's columns (cases_test.go runs them).
const (
	caseAlone      = "alone"
	caseTogether   = "×10"
	caseSlowReader = "slow reader"
	caseSlowWriter = "slow writer"
	caseBeside     = "beside slow exports"
	caseHung       = "hung database"
)

var cases = []string{caseAlone, caseTogether, caseSlowReader, caseSlowWriter, caseBeside, caseHung}

// together is how many callers of a row's kind call it at once in the case ×10.
const together = 10

// TestResourceMatrix runs every row in every case on both databases, each against a parley
// serve of its own, and holds each cell to its bounds (bounds_test.go). With
// PARLEY_WRITE_DOCS=1 it writes the tables of what it measured into docs/reliability.md;
// otherwise it checks that the tables there have this run's shape (docs_test.go).
func TestResourceMatrix(t *testing.T) {
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel() // the two databases side by side, each with its own server
			start := time.Now()
			f := seedForum(t, kind)
			s := startServer(t, serveArgs(f), f.warmUp)
			m := &matrix{t: t, f: f, s: s, rows: rows(), cells: map[string]map[string]*cell{}, alone: map[string]answer{}}
			checkEveryRouteHasARow(t, s, f, m.rows)
			for _, phase := range []struct {
				name string
				run  func()
			}{
				{caseAlone, m.runAlone},
				{caseTogether, m.runTogether},
				{"slow readers and writers", m.runSlow},
				{caseBeside, m.runBesideSlowExports},
				{"declared bodies", m.runDeclaredBodies},
				{caseHung, m.runHung},
			} {
				began, starts, startTime := time.Now(), s.starts, s.startTime
				phase.run()
				t.Logf("%s: %s in %.1f s (%d starts of parley serve, %.1f s)", kind, phase.name, time.Since(began).Seconds(),
					s.starts-starts, (s.startTime - startTime).Seconds())
			}
			t.Logf("%s: the resource matrix took %.0f s", kind, time.Since(start).Seconds())
			m.document()
		})
	}
}

// serveArgs are parley serve's flags: the pages open to everyone (their weakest reader), and
// the trusted realm whose exports the import rows send.
func serveArgs(f *forum) []string {
	return []string{"--addr=127.0.0.1:0", "--db=" + f.serverURL, "--public-read=true",
		"--trust-realm=" + trustedRealm + "=" + f.realmKey.DID(), "--log-level=error"}
}

// warmUp makes a fresh process serve one request of each kind on a small thread, so that
// what a process sets up once (templates, the renderer) is not counted as a case's growth.
func (f *forum) warmUp(s *server) {
	c := caller{authorization: "Bearer " + f.secrets[reader][callersPerKind-1]}
	for _, target := range []string{"/v1/manifest", "/", "/threads/" + f.small, "/threads/" + f.small + "/graph",
		"/v1/export?format=json&thread=" + f.small, "/v1/threads/" + f.small} {
		if a := s.exchange(c, request{method: http.MethodGet, target: target}, readsAtOnce, answerLimit); a.err != nil || a.status >= 500 {
			s.t.Logf("warming up with %s: %v", target, a)
		}
	}
}

// matrix is one database's run: its cells by row and case.
type matrix struct {
	t     *testing.T
	f     *forum
	s     *server
	rows  []row
	cells map[string]map[string]*cell
	alone map[string]answer // each row's answer alone, which other cases are compared with
	// phases are the cases that measure the process as a whole, not a row: their growth.
	phases []phaseResult
}

// cell is one row's figures in one case.
type cell struct {
	memory   *growth // nil where the case measures the process as a whole (phases)
	seconds  float64 // the longest hold of the case's callers
	statuses string
	failed   bool
}

// phaseResult is the growth of the process in a case that runs many rows at once.
type phaseResult struct {
	name   string
	growth growth
	bound  float64
	notes  string
}

func (p phaseResult) failed() bool { return p.growth.killed || p.growth.MB > p.bound }

func (m *matrix) phase(name string, g growth, bound float64, notes string) {
	m.t.Helper()
	p := phaseResult{name: name, growth: g, bound: bound, notes: notes}
	m.phases = append(m.phases, p)
	if p.failed() {
		m.t.Errorf("%s: the server grew by %v, bound %.0f MB (%s)", name, g, bound, notes)
	}
}

func (m *matrix) cell(r row, c string) *cell {
	if m.cells[r.name] == nil {
		m.cells[r.name] = map[string]*cell{}
	}
	if m.cells[r.name][c] == nil {
		m.cells[r.name][c] = &cell{}
	}
	return m.cells[r.name][c]
}

// fail marks a cell failed and says why: the route, the case, the figure and its bound.
func (m *matrix) fail(r row, c string, format string, args ...any) {
	m.t.Helper()
	m.cell(r, c).failed = true
	m.t.Errorf("%s %s, %s (%s, %s): %s", m.f.kind, r.name, c, r.who, r.class, fmt.Sprintf(format, args...))
}

// record files the answers of a row in a case and checks what every case checks: an answer,
// and no fault of the server (a 5xx other than 503 unavailable). Answers that fail alike are
// reported once, with their number.
func (m *matrix) record(r row, c string, answers []answer) *cell {
	m.t.Helper()
	cl := m.cell(r, c)
	counts, faults := map[string]int{}, map[string]int{}
	var order []string
	killed := m.s.killed.Load()
	for _, a := range answers {
		cl.seconds = max(cl.seconds, a.held.Seconds())
		counts[a.label(killed)]++
		var fault string
		switch {
		case a.status == 0 && killed:
			fault = fmt.Sprintf("no answer: the server was killed for growing past %d MB", ceilingMB)
		case a.status == 0 && !a.closed:
			fault = fmt.Sprintf("no answer after %.0f s: %v", a.held.Seconds(), a.err)
		case a.status >= 500 && a.status != http.StatusServiceUnavailable:
			fault = fmt.Sprintf("answered %d: %.300s", a.status, a.head)
		}
		if fault != "" {
			if faults[fault] == 0 {
				order = append(order, fault)
			}
			faults[fault]++
		}
	}
	for _, fault := range order {
		m.fail(r, c, "%s (%d of %d)", fault, faults[fault], len(answers))
	}
	cl.statuses = summary(counts)
	return cl
}

// label is how the table counts an answer; killed: the server was killed during the case.
func (a answer) label(killed bool) string {
	switch {
	case a.status == 0 && killed:
		return "killed"
	case a.closed:
		return "closed"
	case a.status == 0:
		return "no answer"
	case a.letGo:
		return strconv.Itoa(a.status) + " let go"
	}
	return strconv.Itoa(a.status)
}

// summary is "200", or "200×8 503×2" when the answers differ.
func summary(counts map[string]int) string {
	if len(counts) == 1 {
		for label := range counts {
			return label
		}
	}
	var parts []string
	for label, n := range counts {
		parts = append(parts, fmt.Sprintf("%s×%d", label, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
