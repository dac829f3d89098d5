package protocol

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/parleyforum/parley/storage"
)

// Idempotency keys (§ 15): a client that does not know whether its write arrived sends it
// again under the same key, and the write happens once. The mechanism is one for every write:
// a transport calls Idempotently right after it has authenticated the caller, with the key,
// the operation's name and its input; Idempotently answers a replay from the record, or runs
// the operation with the key in its context; and every write takes the key in its own
// transaction through Service.writeTx. A new write plugs in by running its transaction with
// writeTx; its transports pass their key to Idempotently.

// IdempotencyKeyMaxChars is the longest key (§ 15): 1–255 printable ASCII characters.
const IdempotencyKeyMaxChars = 255

// IdempotencyKeyHeader is the HTTP header that carries the key, and IdempotentReplayedHeader
// the one that marks an answer as a replay.
const (
	IdempotencyKeyHeader     = "Idempotency-Key"
	IdempotentReplayedHeader = "Idempotent-Replayed"
	// IdempotencyKeyArgument is the MCP argument that carries the key.
	IdempotencyKeyArgument = "idempotency_key"
)

// idempotencySweepEvery is how often keys past their time are swept, and idempotencySweepBatch
// how many one statement removes.
const (
	idempotencySweepEvery = time.Minute
	idempotencySweepBatch = 500
)

// CheckIdempotencyKey answers invalid_body for a key that is not 1–255 printable ASCII
// characters (! to ~).
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > IdempotencyKeyMaxChars {
		return Refuse(ReasonInvalidBody, "the idempotency key must have 1 to %d characters", IdempotencyKeyMaxChars)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return Refuse(ReasonInvalidBody, "the idempotency key may hold only printable ASCII characters (! to ~), no spaces")
		}
	}
	return nil
}

// ParseIdempotencyKeyHeader reads the values of the Idempotency-Key header: none is no key;
// one is a bare key or a structured-field string (RFC 9651: in double quotes, with \" and \\
// as the only escapes). More than one value, or a malformed one, is invalid_body.
func ParseIdempotencyKeyHeader(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", Refuse(ReasonInvalidBody, "send one Idempotency-Key header, not %d", len(values))
	}
	v := strings.Trim(values[0], " \t")
	if strings.HasPrefix(v, `"`) {
		var b strings.Builder
		closed := false
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\' && i+1 < len(v) && (v[i+1] == '"' || v[i+1] == '\\'):
				b.WriteByte(v[i+1])
				i++
			case c == '\\':
				return "", Refuse(ReasonInvalidBody, `the Idempotency-Key header: a quoted key escapes only \" and \\`)
			case c == '"':
				if i != len(v)-1 {
					return "", Refuse(ReasonInvalidBody, "the Idempotency-Key header has characters after its closing quote")
				}
				closed = true
			default:
				b.WriteByte(c)
			}
		}
		if !closed {
			return "", Refuse(ReasonInvalidBody, "the Idempotency-Key header opens a quote it does not close")
		}
		v = b.String()
	}
	if err := CheckIdempotencyKey(v); err != nil {
		return "", err
	}
	return v, nil
}

// Replayed is the answer of a write repeated under its key: the first answer's JSON as it
// was, which the transports send unchanged (over HTTP with Idempotent-Replayed: true).
type Replayed struct {
	body   json.RawMessage
	fresh  bool
	caller string // what the first answer's writer could do (idempotency_scope.go)
}

// MarshalJSON is the first answer.
func (r *Replayed) MarshalJSON() ([]byte, error) { return r.body, nil }

// Created reports whether the first answer made something new (201 over HTTP) or found it
// made before (an artifact or a key stored earlier: 200).
func (r *Replayed) Created() bool { return r.fresh }

// Body is the first answer's JSON.
func (r *Replayed) Body() []byte { return r.body }

// pendingKey is the context key under which a write finds the idempotency key to take.
type pendingKey struct{}

// errKeyTaken: another request with the same key committed while this one ran.
var errKeyTaken = errors.New("the idempotency key was taken by a concurrent request")

// Idempotently runs one write under key (none: "") for the caller a, who is authenticated
// (nil runs the write as it is, which refuses it). operation names the write (the same name
// over every transport) and input is its input as the transport passes it. A key used before
// with the same operation and input answers the first answer as a *Replayed, whatever the
// checks of what the first write changed would say, to a caller who could make the request
// now (idempotency_scope.go); anyone else gets the answer of a new request. With another
// operation or input the key is idempotency_conflict.
//
// The key is looked up only when it matters: run runs with the key in its context, and its
// write stores the key with its answer as the transaction's last statement (writeTx), which
// finds the key taken when it was used before — the write then rolls back and the stored
// answer is given. A write that is refused, by any check, also looks for a stored answer first.
// So every request with a key answers as if the key had been looked up right after
// authentication (PROTOCOL.md § 15), and a write that succeeds, the common case, costs one
// statement for its key instead of a read and two writes.
func (s *Service) Idempotently(ctx context.Context, a *Actor, key, operation string, input []byte, run func(ctx context.Context) (any, error)) (any, error) {
	if key == "" || a == nil {
		return run(ctx)
	}
	if err := CheckIdempotencyKey(key); err != nil {
		return nil, err
	}
	rec := &storage.IdempotencyKey{Identity: a.Identity, Key: key, Operation: operation, InputSHA256: inputHash(input), Caller: callerOf(a)}
	res, err := run(context.WithValue(ctx, pendingKey{}, rec))
	if err == nil {
		s.sweepKeysSoon()
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	replay, rerr := s.replay(ctx, rec)
	switch {
	case replay != nil && mayReplay(a, replay.caller, err):
		return replay, nil
	case replay != nil:
		return nil, err // § 19: not a caller who could make the request now; answered as a new one
	case rerr != nil && isRefusal(rerr):
		return nil, rerr // the key was used for another operation or input
	case errors.Is(err, errKeyTaken):
		// The key was taken, and yet no answer is stored under it: the write that took it was
		// removed since (its keys are swept after idempotency_key_hours).
		return nil, Refuse(ReasonUnavailable, "a concurrent request with this idempotency key did not finish; retry")
	}
	return nil, err
}

func isRefusal(err error) bool {
	_, ok := AsError(err)
	return ok
}

// replay answers a write recorded under want's key: nil when there is none.
func (s *Service) replay(ctx context.Context, want *storage.IdempotencyKey) (*Replayed, error) {
	got, err := s.db.Read().IdempotencyKey(ctx, want.Identity, want.Key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fault(err)
	}
	if got.Operation != want.Operation {
		return nil, Refuse(ReasonIdempotencyConflict, "the idempotency key was used for another operation (%s); use a new key for a new write", got.Operation)
	}
	if got.InputSHA256 != want.InputSHA256 {
		return nil, Refuse(ReasonIdempotencyConflict, "the idempotency key was used with another input; use a new key for a new write")
	}
	return &Replayed{body: json.RawMessage(got.Body), fresh: got.Fresh, caller: got.Caller}, nil
}

// writeTx runs fn as one write transaction (storage.DB.Write) and is how every write runs:
// when the request carries an idempotency key, the transaction stores the key with fn's
// answer as its last statement, or, when the key is taken, answers errKeyTaken and rolls back
// (Idempotently then gives the stored answer). A refused or failed write rolls back before it
// reaches its key: only successful writes are remembered.
func (s *Service) writeTx(ctx context.Context, fn func(ctx context.Context, f *storage.Forum) (answer any, err error)) error {
	rec, _ := ctx.Value(pendingKey{}).(*storage.IdempotencyKey)
	return s.db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		answer, err := fn(ctx, f)
		if err != nil {
			return err
		}
		return keepAnswer(ctx, f, rec, answer)
	})
}

// keepAnswer stores the write's answer under rec's key (none: nil) in the write transaction
// f, as its last statement, or answers errKeyTaken.
func keepAnswer(ctx context.Context, f *storage.Forum, rec *storage.IdempotencyKey, answer any) error {
	if rec == nil {
		return nil
	}
	body, err := marshalAnswer(answer)
	if err != nil {
		return err
	}
	rec.ID, rec.Body, rec.Fresh, rec.CreatedAt = 0, string(body), true, storage.Now()
	if c, ok := answer.(interface{ Created() bool }); ok {
		rec.Fresh = c.Created()
	}
	taken, err := f.KeepIdempotencyKey(ctx, rec)
	if err != nil {
		return err
	}
	if !taken {
		return errKeyTaken
	}
	return nil
}

// IdempotencyKeyOf is the key the request in ctx carries for its write, nil when none: for a
// write whose transaction is not DB.Write (the artifact store's), which takes it with takeKey
// and records its answer with keepAnswer.
func IdempotencyKeyOf(ctx context.Context) *storage.IdempotencyKey {
	rec, _ := ctx.Value(pendingKey{}).(*storage.IdempotencyKey)
	return rec
}

// marshalAnswer is the answer's JSON as the transports write it: < > & as they are.
func marshalAnswer(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// inputHash is the SHA-256 of the input in a canonical form: a JSON input decoded and encoded
// again (members sorted, no white space, numbers as written), so that a retry that orders its
// fields otherwise is the same input; any other input (an artifact's bytes) as it is.
func inputHash(input []byte) string {
	canonical := input
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if b, err := marshalAnswer(v); err == nil {
			canonical = b
		}
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// sweepKeysSoon removes the keys past limits.idempotency_key_hours in the background, at most
// once a minute per instance, in small batches (each one short statement) so that no write
// waits on the sweep.
func (s *Service) sweepKeysSoon() {
	now := time.Now()
	last := s.lastSweep.Load()
	if now.Sub(time.Unix(0, last)) < idempotencySweepEvery || !s.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	go func() { _, _ = s.SweepIdempotencyKeys(context.Background()) }()
}

// SweepIdempotencyKeys removes every key older than limits.idempotency_key_hours, in batches,
// and reports how many it removed.
func (s *Service) SweepIdempotencyKeys(ctx context.Context) (int, error) {
	cutoff := storage.Now().Add(-time.Duration(s.limits.IdempotencyKeyHours) * time.Hour)
	total := 0
	for {
		bctx, cancel := context.WithTimeout(ctx, s.deadline)
		n, err := s.db.SweepIdempotencyKeys(bctx, cutoff, idempotencySweepBatch)
		cancel()
		total += n
		if err != nil || n < idempotencySweepBatch {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// answering adapts a transaction that leaves its answer in *res to writeTx.
func answering[T any](res **T, fn func(ctx context.Context, f *storage.Forum) error) func(ctx context.Context, f *storage.Forum) (any, error) {
	return func(ctx context.Context, f *storage.Forum) (any, error) {
		if err := fn(ctx, f); err != nil {
			return nil, err
		}
		return *res, nil
	}
}
