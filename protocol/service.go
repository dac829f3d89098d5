// Package protocol holds the rules of Parley v1 once: the envelope, the nine acts, the state
// machine, proposals, authority, loop protection, reading, the inbox, the manifest, limits
// and refusals, and the one operation layer that every transport calls unchanged.
package protocol

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/parleyforum/parley/protocol/admission"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// Options configure a Service; the zero value of a field means its default.
type Options struct {
	Realm   string // DefaultRealm when empty
	Limits  Limits // DefaultLimits() when zero
	Version string // the server's version, for the manifest
	// Deadline bounds the database work of one request (a long poll's wait excepted, not its
	// reads); DefaultDeadline when zero.
	Deadline time.Duration
	// Artifacts answers whether the artifact store holds a ref (§ 13), for evidence of kind
	// artifact; nil means the store in the database (artifact.go).
	Artifacts func(ctx context.Context, ref string) (bool, error)
	// Policies are the instance's policies the manifest lists (§ 17); the protocol's rules
	// never read them.
	Policies []PolicyInfo
	// RealmKey signs key bindings and exports (§ 14); nil means the key kept in the database,
	// created on first use (realm_key.go).
	RealmKey *signed.Signer
	// TrustRealms are the other realms whose exports this forum imports (§ 14), name →
	// realm key (did:key); none by default.
	TrustRealms map[string]string
	// ReadPageBytes bounds the JSON of one page of read_thread and claim_graph (read_page.go);
	// DefaultReadPageBytes when zero.
	ReadPageBytes int
	// Gate admits heavy work (§ 19, protocol/admission); nil means a gate sized from the
	// machine. Every transport of one process shares the service's.
	Gate *admission.Gate
}

// GateConfig is the admission gate's configuration for a service over db: the capacities the
// machine gives each class, but no more exports at once than the pool of long reads has
// connections — an export holds one for as long as it streams (§ 19).
func GateConfig(db *storage.DB) admission.Config {
	var cfg admission.Config
	if db != nil {
		cfg.Capacity[admission.Export] = min(cfg.Capacities()[admission.Export.String()], db.LongReadConnections())
	}
	return cfg
}

// DefaultDeadline is how long one request's database work may take before the request is
// answered unavailable: long enough for any query Parley makes on a healthy database, short
// enough that a hung one does not hold clients (and their connections) for long.
const DefaultDeadline = 5 * time.Second

// UnavailableRetryAfter is the seconds an HTTP client is told to wait (Retry-After) before
// it retries a request answered unavailable: a database that did not answer is retried in a
// few seconds, not at once by every client. The refusal object itself carries retry_after
// for rate_limited alone (§ 9).
const UnavailableRetryAfter = 2

// Service is the operation layer. Every operation is one database transaction: a refused
// request writes nothing; an accepted one writes its message, thread change and event
// together or not at all.
type Service struct {
	db       *storage.DB
	realm    string
	limits   Limits
	version  string
	deadline time.Duration
	readPage int // Options.ReadPageBytes
	// authBlocks are the client addresses refused for failed authentications (bearer.go).
	authBlocks blocks
	waits      *waitSlots
	// artifacts: see Options.Artifacts.
	artifacts func(ctx context.Context, ref string) (bool, error)
	// lastSweep is when idempotency keys were last swept (UnixNano; idempotency.go).
	lastSweep atomic.Int64
	policies  []PolicyInfo
	realmKey  realmKeyCache
	cursors   cursorKeyCache // the key cursors are signed with (cursor.go)
	trust     map[string]string
	gate      *admission.Gate
}

// New makes the operation layer over db.
func New(db *storage.DB, opts Options) *Service {
	if opts.Realm == "" {
		opts.Realm = DefaultRealm
	}
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Deadline <= 0 {
		opts.Deadline = DefaultDeadline
	}
	if opts.ReadPageBytes <= 0 {
		opts.ReadPageBytes = DefaultReadPageBytes
	}
	s := &Service{
		deadline:  opts.Deadline,
		db:        db,
		realm:     opts.Realm,
		limits:    opts.Limits,
		version:   opts.Version,
		waits:     newWaitSlots(opts.Limits.InboxWaitsPerIdentity, opts.Limits.InboxWaitsMax),
		artifacts: opts.Artifacts,
		policies:  opts.Policies,
		realmKey:  realmKeyCache{key: opts.RealmKey},
		trust:     opts.TrustRealms,
		readPage:  opts.ReadPageBytes,
		gate:      opts.Gate,
	}
	if s.gate == nil {
		s.gate = admission.New(GateConfig(db))
	}
	if s.artifacts == nil {
		s.artifacts = s.hasArtifact
	}
	return s
}

// Limits are the limits in force.
func (s *Service) Limits() Limits { return s.limits }

// Realm is the realm of this instance's agents.
func (s *Service) Realm() string { return s.realm }

// Bounded is ctx with the deadline of one request's database work. Transports run each
// operation in it, except one that waits (the inbox's long poll), which bounds its own reads.
func (s *Service) Bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.deadline)
}

// writing is ctx for a write. A caller that goes away does not end a write that has begun
// (it is carried to its commit, or rolled back whole), but the request's deadline does: a
// write is never waited for beyond it (storage.DB.Write commits only before it).
func writing(ctx context.Context) (context.Context, context.CancelFunc) {
	detached := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(detached, d)
	}
	return detached, func() {}
}

// DB is the database the service works on.
func (s *Service) DB() *storage.DB { return s.db }

// fault turns a storage error into the refusal it means; any other error is the server's own.
func fault(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := AsError(err); ok {
		return err
	}
	if errors.Is(err, storage.ErrUnavailable) {
		return Refuse(ReasonUnavailable, "the database cannot be reached or did not answer in time; retry later")
	}
	return err
}

// requireActor answers unauthenticated when there is no actor, and token_right_missing when
// it lacks right.
func requireActor(a *Actor, right Right) *Error {
	if a == nil {
		return Refuse(ReasonUnauthenticated, "a bearer token is required (Authorization: Bearer <token>)")
	}
	if !a.Can(right) {
		return Refuse(ReasonTokenRightMissing, "the token lacks the %s right", right)
	}
	return nil
}
