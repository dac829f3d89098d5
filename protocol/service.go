// Package protocol holds the rules of Parley v1 once: the envelope, the nine acts, the state
// machine, proposals, authority, loop protection, reading, the inbox, the manifest, limits
// and refusals, and the one operation layer that every transport calls unchanged.
package protocol

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/parleyforum/parley/storage"
)

// Options configure a Service; the zero value of a field means its default.
type Options struct {
	Realm   string // DefaultRealm when empty
	Limits  Limits // DefaultLimits() when zero
	Version string // the server's version, for the manifest
	// Artifacts answers whether the artifact store holds a ref (§ 13), for evidence of kind
	// artifact; nil means this instance stores no artifacts, so no such evidence can exist.
	Artifacts func(ctx context.Context, ref string) (bool, error)
}

// Service is the operation layer. Every operation is one database transaction: a refused
// request writes nothing; an accepted one writes its message, thread change and event
// together or not at all.
type Service struct {
	db      *storage.DB
	realm   string
	limits  Limits
	version string
	rate    *rateLimiter
	changes *broadcast
	// artifacts: see Options.Artifacts.
	artifacts func(ctx context.Context, ref string) (bool, error)
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
	return &Service{
		db:      db,
		realm:   opts.Realm,
		limits:  opts.Limits,
		version: opts.Version,
		rate:    newRateLimiter(opts.Limits.WritesPerMinute, time.Minute),
		changes: newBroadcast(),

		artifacts: opts.Artifacts,
	}
}

// Limits are the limits in force.
func (s *Service) Limits() Limits { return s.limits }

// Realm is the realm of this instance's agents.
func (s *Service) Realm() string { return s.realm }

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
		return Refuse(ReasonUnavailable, "the database cannot be reached; retry later")
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

// broadcast wakes waiting readers (inbox long polls) when this instance commits a change.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBroadcast() *broadcast { return &broadcast{ch: make(chan struct{})} }

// wait returns a channel closed at the next change.
func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcast) notify() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}
