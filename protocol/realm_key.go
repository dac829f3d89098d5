package protocol

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 14, the realm key: one Ed25519 key per forum, created on first start and kept in the
// database (so that every instance of one forum signs with the same key), published in the
// manifest as realm_key. It signs key bindings and exports, never stances.

// LoadRealmKey reads the realm key from the database, creating it when there is none yet. Of
// several instances that start at once on one empty database exactly one creates it (one
// insert-if-absent statement), and all of them answer that key.
func LoadRealmKey(ctx context.Context, db *storage.DB) (*signed.Signer, error) {
	encoded, _, err := db.SettingOrCreate(ctx, storage.SettingRealmKey, newRealmSeed)
	if err != nil {
		return nil, fmt.Errorf("keeping the realm key: %w", err)
	}
	seed, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("the realm key kept in the database (setting %s) is not the base64 of a %d-byte seed", storage.SettingRealmKey, ed25519.SeedSize)
	}
	return signed.NewSigner(ed25519.NewKeyFromSeed(seed)), nil
}

// newRealmSeed makes the 32 random bytes of a new realm key's seed, base64.
func newRealmSeed() (string, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(seed), nil
}

// realmKeyCache holds the realm key once it is known: it never changes for a database.
type realmKeyCache struct {
	mu  sync.Mutex
	key *signed.Signer
}

// RealmKey is this forum's realm key, read from the database (or created there) on first use.
func (s *Service) RealmKey(ctx context.Context) (*signed.Signer, error) {
	s.realmKey.mu.Lock()
	defer s.realmKey.mu.Unlock()
	if s.realmKey.key != nil {
		return s.realmKey.key, nil
	}
	if s.db == nil {
		return nil, fmt.Errorf("no database holds the realm key")
	}
	key, err := LoadRealmKey(ctx, s.db)
	if err != nil {
		return nil, fault(err)
	}
	s.realmKey.key = key
	return key, nil
}

// SignAsRealm signs a JSON document (an object without proof) with the realm key, as an
// eddsa-jcs-2022 DataIntegrityProof created now, and answers the document with its proof
// (canonical JSON). Bindings, exports and the dataset's last line are signed with it.
func (s *Service) SignAsRealm(ctx context.Context, doc []byte) ([]byte, error) {
	key, err := s.RealmKey(ctx)
	if err != nil {
		return nil, err
	}
	return key.Sign(doc, storage.Now())
}

// realmKeyDID is the realm key's did:key for the manifest, "" when it cannot be had (a
// service without a database, as in the manifest's own tests).
func (s *Service) realmKeyDID() string {
	if s.db == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.deadline)
	defer cancel()
	key, err := s.RealmKey(ctx)
	if err != nil {
		return ""
	}
	return key.DID()
}
