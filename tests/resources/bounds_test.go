//go:build resources

package resources

import (
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// The bounds every cell is held to, from PROTOCOL.md § 19, the admission classes
// (protocol/admission) and the figures issue 35 was accepted by. docs/reliability.md (The
// resource matrix) lists them.

const (
	// baseMB is what any case may grow the process by beyond its callers' share: the
	// garbage collector lets the heap grow to twice what is live before it collects, and
	// connections, goroutines and buffers come and go.
	baseMB = 32
	// lightPerCallerMB is what one read or write of one page may grow the process by: the
	// page (at most 4 MiB, § 19) and what it is built from — the rows of a thread of
	// thread_max_messages messages and thread_max_claims claims — with the collector's
	// headroom over them.
	lightPerCallerMB = 32
	// slowWriterMB is what a connection whose request is still arriving may hold: its
	// buffers and what it has sent, never what it declared (§ 19).
	slowWriterMB = 1
	// declaredMB: an unauthenticated client's growth, whatever it declares (issue 35).
	declaredMB = 150
)

// The largest answer of a row that is not an export: § 19's page, and over MCP the largest
// JSON-RPC answer the transport sends (docs/reliability.md: one MCP answer), which carries the
// result twice, as text and as structured content.
const (
	pageMaxBytes      = 4 << 20
	mcpAnswerMaxBytes = 8 << 20
)

// importMaxBytes is § 8's import_max_bytes: the largest body an import may declare.
const importMaxBytes = 67108864

const (
	// deadline is the request deadline parley serve runs with (its default): a request's
	// database work ends within it, and a hung database is answered 503 within it (§ 19).
	deadline = protocol.DefaultDeadline
	// slack is what a loaded machine may add to any time bound: make test runs other
	// packages beside this one on the same cores.
	slack = 5 * time.Second
	// cutAfter is § 19's slow reader: slower than min_read_bytes_per_second for 10 s, cut.
	cutAfter = 10 * time.Second
	// readTimeout is the server's read deadline for a request's headers and body
	// (docs/reliability.md, Timeouts and limits in force).
	readTimeout = 30 * time.Second
	// restWithin is how fast the rest of the forum answers while every export slot is held
	// by a slow reader (issue 35).
	restWithin = 2 * time.Second
)

// The longest a case waits for an exchange before it counts it as held for good.
const (
	answerLimit     = 60 * time.Second
	slowReadLimit   = deadline + cutAfter + 2*slack
	slowWriteLimit  = readTimeout + 2*slack
	hungAnswerLimit = deadline + 3*slack
)

// gate is the admission gate as parley serve sizes it on this machine (no GOMEMLIMIT: the
// default budget; GOMAXPROCS: the cores), for the classes' slots.
var gate = admission.New(admission.Config{})

// memoryBoundMB is the most n callers of a class at once may grow the process by: the base,
// and for each caller at work — a heavy class runs at most its slots at once — what one may
// hold.
func memoryBoundMB(class admission.Class, n int) float64 {
	per := float64(lightPerCallerMB)
	if class.Heavy() {
		per = float64(class.SlotBytes()) / (1 << 20)
	}
	return baseMB + float64(min(n, gate.Capacity(class)))*per
}

// heldBound is the longest a caller that reads at once may hold its connection: the deadline
// for everything but an export, which streams as long as the forum is large.
func heldBound(class admission.Class) time.Duration {
	if class == admission.Export {
		return answerLimit
	}
	return deadline + slack
}
