package protocol

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 14 signed, the keys: an identity registers Ed25519 public keys, with which it signs its
// stances; anyone who reads may list them, each with its did:key and its binding.

// KeyView is a registered key as returned: its did:key, and its binding — the document by
// which the realm key vouches that this key speaks for this identity (§ 14). A key registered
// before § 14 that was weak, or held by another identity first, has neither.
type KeyView struct {
	ID        string          `json:"id"`
	Identity  string          `json:"identity"`
	PublicKey string          `json:"public_key"`
	DID       string          `json:"did,omitempty"`
	Binding   json.RawMessage `json:"binding,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// KeyResult is what key registration answers; Created tells a new key (201) from one
// registered before (200).
type KeyResult struct {
	Key     *KeyView `json:"key"`
	created bool
	stored  *storage.SigningKey
}

// Created reports whether this registration stored the key.
func (r *KeyResult) Created() bool { return r.created }

// KeysResult is an identity's keys, oldest first.
type KeysResult struct {
	Keys []*KeyView `json:"keys"`
}

// KeyKey formats a key id.
func KeyKey(id int64) string { return "key_" + strconv.FormatInt(id, 10) }

// keyView is a stored key as returned, with its binding.
func (s *Service) keyView(ctx context.Context, k *storage.SigningKey) (*KeyView, error) {
	v := &KeyView{ID: KeyKey(k.ID), Identity: k.Identity, PublicKey: k.PublicKey, CreatedAt: k.CreatedAt.UTC()}
	if k.DID == nil {
		return v, nil
	}
	v.DID = *k.DID
	binding, err := s.binding(ctx, k)
	if err != nil {
		return nil, err
	}
	v.Binding = binding
	return v, nil
}

// binding is a key's binding: for a key imported from another realm the one that realm
// signed; for this forum's own keys {type: ParleyKeyBinding, realm, identity, key: did,
// created_at} with a proof by the realm key created when the key was registered, so that the
// same key always has the same binding, byte for byte.
func (s *Service) binding(ctx context.Context, k *storage.SigningKey) (json.RawMessage, error) {
	if k.Binding != nil {
		return json.RawMessage(*k.Binding), nil
	}
	realmKey, err := s.RealmKey(ctx)
	if err != nil {
		return nil, err
	}
	created := k.CreatedAt.UTC().Truncate(time.Second)
	doc, err := json.Marshal(map[string]string{
		"type": "ParleyKeyBinding", "realm": s.realm, "identity": k.Identity, "key": *k.DID,
		"created_at": created.Format(time.RFC3339),
	})
	if err != nil {
		return nil, err
	}
	return realmKey.Sign(doc, created)
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
	pub, kerr := publicKey(encoded)
	if kerr != nil {
		return nil, Refuse(ReasonInvalidBody, "field public_key: %v", kerr)
	}
	did := signed.DIDKey(pub)
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
		stored, created, err := f.RegisterKey(ctx, &storage.SigningKey{Identity: a.Identity, PublicKey: encoded, DID: &did, CreatedAt: now})
		if errors.Is(err, storage.ErrAlreadyExists) {
			return Refuse(ReasonInvalidTransition, "this key is registered to another identity; a key speaks for one identity only")
		}
		if err != nil {
			return err
		}
		res = &KeyResult{Key: &KeyView{}, created: created, stored: stored}
		if !created {
			return nil // a key registered before is no write
		}
		return s.countWrite(ctx, f, a, now)
	})
	if werr != nil {
		return nil, fault(werr)
	}
	view, verr := s.keyView(ctx, res.stored)
	if verr != nil {
		return nil, fault(verr)
	}
	res.Key = view
	return res, nil
}

// publicKey reads a public key as registered: exactly the standard base64 of 32 bytes — no
// white space, no other spelling of the same bytes — of a key signed.CheckPublicKey accepts.
func publicKey(encoded string) (ed25519.PublicKey, error) {
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || base64.StdEncoding.EncodeToString(raw) != encoded {
		return nil, errors.New("a public key must be the standard base64 (RFC 4648, with padding, no white space) of its 32 bytes")
	}
	if err := signed.CheckPublicKey(raw); err != nil {
		return nil, err
	}
	return ed25519.PublicKey(raw), nil
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
		view, verr := s.keyView(ctx, &keys[i])
		if verr != nil {
			return nil, fault(verr)
		}
		out.Keys[i] = view
	}
	return out, nil
}

// wellFormedIdentity: <realm>:<handle>, both of the handle's form (human:<name> included).
func wellFormedIdentity(identity string) bool {
	realm, handle, ok := strings.Cut(identity, ":")
	return ok && ValidHandle(realm) && ValidHandle(handle)
}
