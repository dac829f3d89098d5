package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Claims of the dialectic profile and the stances taken on them (attest, refute, verify).
// The queries run on a Forum, so that inside DB.Write a claim operation shares the
// transaction (and the thread's row lock) of everything else it writes.

// Claim is one assertion with its proof. Evidence is the JSON array of evidence items.
type Claim struct {
	bun.BaseModel `bun:"table:claims"`

	ID               int64      `bun:"id,pk,autoincrement"`
	ThreadID         int64      `bun:"thread_id,notnull"`
	AnchorID         int64      `bun:"anchor_id,notnull"`
	Statement        string     `bun:"statement,notnull"`
	Identity         string     `bun:"identity,notnull"`
	Extension        string     `bun:"extension,notnull"`
	AuthorKind       string     `bun:"author_kind,notnull"`
	State            string     `bun:"state,notnull"`
	StateOrigin      string     `bun:"state_origin,notnull"`
	StateConfirmedAt *time.Time `bun:"state_confirmed_at"`
	Evidence         string     `bun:"evidence,notnull"`
	ValidUntil       *time.Time `bun:"valid_until"`
	SupersededBy     *int64     `bun:"superseded_by"`
	ProvenanceModel  *string    `bun:"provenance_model"`
	ProvenanceClient *string    `bun:"provenance_client"`
	// SealedQuorum is verify_quorum as it was when the claim became verified (§ 15).
	SealedQuorum *int      `bun:"sealed_quorum"`
	CreatedAt    time.Time `bun:"created_at,notnull"`
	UpdatedAt    time.Time `bun:"updated_at,notnull"`
	// The origin of a claim imported from another realm (§ 14): the realm, the claim's id
	// and its thread there; nil for this forum's own claims.
	OriginRealm  *string `bun:"origin_realm"`
	OriginClaim  *string `bun:"origin_claim"`
	OriginThread *string `bun:"origin_thread"`
	// OriginImportedAt is when the import that brought the claim here ran (its own
	// created_at is kept as it came), and OriginVia the realm whose export brought it: only
	// that realm's export and the claim's own realm's may change it later.
	OriginImportedAt *time.Time `bun:"origin_imported_at"`
	OriginVia        *string    `bun:"origin_via"`
}

// Stance kinds as stored.
const (
	StanceAttest = "attest"
	StanceRefute = "refute"
	StanceVerify = "verify"
)

// Stance is an attestation, a refutation or a verification of a claim.
type Stance struct {
	bun.BaseModel `bun:"table:claim_stances"`

	ID         int64   `bun:"id,pk,autoincrement"`
	ClaimID    int64   `bun:"claim_id,notnull"`
	Kind       string  `bun:"kind,notnull"`
	Identity   string  `bun:"identity,notnull"`
	Extension  string  `bun:"extension,notnull"`
	AuthorKind string  `bun:"author_kind,notnull"`
	Evidence   string  `bun:"evidence,notnull"`
	Note       *string `bun:"note"`
	Body       *string `bun:"body"`
	// The provenance the stance was sent with (§ 15), as a message's.
	ProvenanceModel  *string   `bun:"provenance_model"`
	ProvenanceClient *string   `bun:"provenance_client"`
	CreatedAt        time.Time `bun:"created_at,notnull"`
	// The signature of the signed profile (§ 13), when the stance was signed: the key, the
	// at exactly as sent (it is part of the signed bytes) and the base64 signature.
	SignatureKeyID *int64  `bun:"signature_key_id"`
	SignatureAt    *string `bun:"signature_at"`
	Signature      *string `bun:"signature"`
	// SignaturePublicKey is the signing key's public key, read with the stance (StancesOf).
	SignaturePublicKey *string `bun:"signature_public_key,scanonly"`
	// Proof is a signed stance's document with its proof (§ 14, canonical JSON), exactly as
	// it was checked, and ProofKeyID the key that made it.
	Proof      *string `bun:"proof"`
	ProofKeyID *int64  `bun:"proof_key_id"`
	// OriginStance is the id of an imported stance in the realm it came from (§ 14).
	OriginStance *string `bun:"origin_stance"`
}

// claimColumns are the columns a change of a claim writes.
var claimColumns = []string{"state", "state_origin", "state_confirmed_at", "superseded_by", "sealed_quorum", "updated_at"}

// Claim reads one claim.
func (f *Forum) Claim(ctx context.Context, id int64) (*Claim, error) {
	c := new(Claim)
	q := f.q.NewSelect().Model(c).Where("id = ?", id)
	err := f.scope.onThreads(q, "thread_id").Scan(ctx)
	return c, translate(err)
}

// InsertClaim stores a new claim and sets its ID.
func (f *Forum) InsertClaim(ctx context.Context, c *Claim) error {
	_, err := f.q.NewInsert().Model(c).Returning("id").Exec(ctx)
	return translate(err)
}

// UpdateClaim writes a claim's changed state and supersession.
func (f *Forum) UpdateClaim(ctx context.Context, c *Claim) error {
	res, err := f.q.NewUpdate().Model(c).Column(claimColumns...).WherePK().Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

// InsertStance stores an attestation, refutation or verification and sets its ID. A second
// attestation or verification by the same identity is ErrAlreadyExists.
func (f *Forum) InsertStance(ctx context.Context, s *Stance) error {
	_, err := f.q.NewInsert().Model(s).Returning("id").Exec(ctx)
	return translate(err)
}

// ClaimsOf reads the claims of the given threads (all threads when none are given), oldest
// first.
func (f *Forum) ClaimsOf(ctx context.Context, threadIDs ...int64) ([]Claim, error) {
	var out []Claim
	q := f.q.NewSelect().Model(&out).Order("id")
	if len(threadIDs) > 0 {
		q = q.Where("thread_id IN (?)", bun.In(threadIDs))
	}
	q = f.scope.onThreads(q, "thread_id")
	if err := q.Scan(ctx); err != nil {
		return nil, translate(err)
	}
	if f.asOf != nil {
		return f.claimsAsOf(ctx, out)
	}
	return out, nil
}

// StancesOf reads the stances on the given claims, oldest first, each signed one with its
// key's public key.
func (f *Forum) StancesOf(ctx context.Context, claimIDs []int64) ([]Stance, error) {
	var out []Stance
	if len(claimIDs) == 0 {
		return out, nil
	}
	q := f.q.NewSelect().Model(&out).
		ColumnExpr("stance.*").ColumnExpr("signing_key.public_key AS signature_public_key").
		Join("LEFT JOIN signing_keys AS signing_key ON signing_key.id = stance.signature_key_id").
		Where("stance.claim_id IN (?)", bun.In(claimIDs)).Order("stance.id")
	if f.asOf != nil {
		var err error
		if q, err = f.stancesAsOf(ctx, q, "stance.id"); err != nil {
			return nil, err
		}
	}
	err := q.Scan(ctx)
	return out, translate(err)
}

// Supersedes lists the ids of the claims that claim id superseded, oldest first.
func (f *Forum) Supersedes(ctx context.Context, id int64) ([]int64, error) {
	var out []int64
	err := f.q.NewSelect().Model((*Claim)(nil)).Column("id").Where("superseded_by = ?", id).Order("id").Scan(ctx, &out)
	return out, translate(err)
}

// HasStance reports whether identity has taken a stance of kind on a claim.
func (f *Forum) HasStance(ctx context.Context, claimID int64, kind, identity string) (bool, error) {
	ok, err := f.q.NewSelect().Model((*Stance)(nil)).
		Where("claim_id = ?", claimID).Where("kind = ?", kind).Where("identity = ?", identity).Exists(ctx)
	return ok, translate(err)
}

// CountStances counts the stances of kind on a claim.
func (f *Forum) CountStances(ctx context.Context, claimID int64, kind string) (int, error) {
	n, err := f.q.NewSelect().Model((*Stance)(nil)).Where("claim_id = ?", claimID).Where("kind = ?", kind).Count(ctx)
	return int(n), translate(err)
}

// CountAllStances counts the stances of every kind on a claim (claim_max_stances).
func (f *Forum) CountAllStances(ctx context.Context, claimID int64) (int, error) {
	n, err := f.q.NewSelect().Model((*Stance)(nil)).Where("claim_id = ?", claimID).Count(ctx)
	return int(n), translate(err)
}

// CountClaimsOf counts the claims of a thread (thread_max_claims).
func (f *Forum) CountClaimsOf(ctx context.Context, threadID int64) (int, error) {
	n, err := f.q.NewSelect().Model((*Claim)(nil)).Where("thread_id = ?", threadID).Count(ctx)
	return int(n), translate(err)
}

// ClaimByOrigin reads the claim imported from realm as its claim id there, or ErrNotFound.
func (f *Forum) ClaimByOrigin(ctx context.Context, realm, claim string) (*Claim, error) {
	c := new(Claim)
	err := f.q.NewSelect().Model(c).Where("origin_realm = ?", realm).Where("origin_claim = ?", claim).Scan(ctx)
	return c, translate(err)
}

// HasOriginStance reports whether a claim holds the stance imported as origin.
func (f *Forum) HasOriginStance(ctx context.Context, claimID int64, origin string) (bool, error) {
	ok, err := f.q.NewSelect().Model((*Stance)(nil)).
		Where("claim_id = ?", claimID).Where("origin_stance = ?", origin).Exists(ctx)
	return ok, translate(err)
}

// ThreadOfOrigin finds the thread here that holds claims imported from realm's thread, if
// any.
func (f *Forum) ThreadOfOrigin(ctx context.Context, realm, thread string) (int64, bool, error) {
	var ids []int64
	err := f.q.NewSelect().Model((*Claim)(nil)).Column("thread_id").
		Where("origin_realm = ?", realm).Where("origin_thread = ?", thread).Order("id").Limit(1).Scan(ctx, &ids)
	if err != nil {
		return 0, false, translate(err)
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	return ids[0], true, nil
}
