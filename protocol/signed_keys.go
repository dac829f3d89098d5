package protocol

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 13 signed, the keys: an identity registers Ed25519 public keys, with which it signs its
// attestations and verifications; anyone who reads may list them.

// KeyView is a registered key as returned.
type KeyView struct {
	ID        string    `json:"id"`
	Identity  string    `json:"identity"`
	PublicKey string    `json:"public_key"`
	CreatedAt time.Time `json:"created_at"`
}

// KeyResult is what key registration answers; Created tells a new key (201) from one
// registered before (200).
type KeyResult struct {
	Key     *KeyView `json:"key"`
	created bool
}

// Created reports whether this registration stored the key.
func (r *KeyResult) Created() bool { return r.created }

// KeysResult is an identity's keys, oldest first.
type KeysResult struct {
	Keys []*KeyView `json:"keys"`
}

// KeyKey formats a key id.
func KeyKey(id int64) string { return "key_" + strconv.FormatInt(id, 10) }

func keyView(k *storage.SigningKey) *KeyView {
	return &KeyView{ID: KeyKey(k.ID), Identity: k.Identity, PublicKey: k.PublicKey, CreatedAt: k.CreatedAt.UTC()}
}

// RegisterKey answers {public_key}: the caller's identity registers an Ed25519 public key
// (the standard base64 of its 32 bytes). The same key again is the key registered before.
func (s *Service) RegisterKey(ctx context.Context, a *Actor, raw []byte) (*KeyResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	encoded, ok, err := o.str("public_key")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field public_key is missing")
	}
	if _, kerr := signed.PublicKey(encoded); kerr != nil {
		return nil, Refuse(ReasonInvalidBody, "field public_key: %v", kerr)
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightWrite); err != nil {
		return nil, err
	}
	now := storage.Now()
	var res *KeyResult
	ctx, cancel := writing(ctx)
	defer cancel()
	werr := s.db.Write(ctx, func(ctx context.Context, f *storage.Forum) error {
		stored, created, err := f.RegisterKey(ctx, &storage.SigningKey{Identity: a.Identity, PublicKey: encoded, CreatedAt: now})
		if err != nil {
			return err
		}
		res = &KeyResult{Key: keyView(stored), created: created}
		if !created {
			return nil // a key registered before is no write
		}
		return s.countWrite(ctx, f, a, now)
	})
	if werr != nil {
		return nil, fault(werr)
	}
	return res, nil
}

// ListKeys answers {identity?}: the keys of an identity, the caller's own by default.
func (s *Service) ListKeys(ctx context.Context, a *Actor, raw []byte) (*KeysResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	identity, ok, err := o.str("identity")
	if err != nil {
		return nil, err
	}
	if ok && !wellFormedIdentity(identity) {
		return nil, Refuse(ReasonInvalidBody, "field identity must be <realm>:<handle> or human:<name>")
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	if !ok {
		identity = a.Identity
	}
	keys, serr := s.db.Read().KeysOf(ctx, identity)
	if serr != nil {
		return nil, fault(serr)
	}
	out := &KeysResult{Keys: make([]*KeyView, len(keys))}
	for i := range keys {
		out.Keys[i] = keyView(&keys[i])
	}
	return out, nil
}

// wellFormedIdentity: <realm>:<handle>, both of the handle's form (human:<name> included).
func wellFormedIdentity(identity string) bool {
	realm, handle, ok := strings.Cut(identity, ":")
	return ok && ValidHandle(realm) && ValidHandle(handle)
}
