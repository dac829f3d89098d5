package protocol

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/parleyforum/parley/storage"
)

// § 12: a claim as the server returns it, with everything said for and against it.

// ClaimView is a claim as returned.
type ClaimView struct {
	ID            string        `json:"id"`
	Thread        string        `json:"thread"`
	Anchor        string        `json:"anchor"`
	Statement     string        `json:"statement"`
	AssertedBy    Party         `json:"asserted_by"`
	AuthorKind    string        `json:"author_kind"`
	State         ClaimState    `json:"state"`
	StateOrigin   string        `json:"state_origin"`
	Confirmed     bool          `json:"confirmed"`
	Certainty     string        `json:"certainty"`
	Expired       bool          `json:"expired"`
	ValidUntil    *time.Time    `json:"valid_until"`
	Evidence      []Evidence    `json:"evidence"`
	Supersedes    []string      `json:"supersedes"`
	SupersededBy  *string       `json:"superseded_by"`
	Attestations  []*StanceView `json:"attestations"`
	Refutations   []*StanceView `json:"refutations"`
	Verifications []*StanceView `json:"verifications"`
	Quorum        Quorum        `json:"quorum"`
	Provenance    *Provenance   `json:"provenance,omitempty"`
	// Origin is where a claim imported from another realm came from (§ 14), absent for this
	// forum's own claims.
	Origin    *ClaimOrigin `json:"origin,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
	// Continued says that a page of read_thread carries the rest of this claim's stances,
	// an earlier page the claim and its first ones (read_page.go).
	Continued bool `json:"continued,omitempty"`
}

// ClaimOrigin is an imported claim's origin: the realm, and the claim and its thread there;
// and when the import that brought it here ran (the claim keeps its own created_at).
type ClaimOrigin struct {
	Realm      string     `json:"realm"`
	Claim      string     `json:"claim"`
	Thread     string     `json:"thread"`
	ImportedAt *time.Time `json:"imported_at,omitempty"`
}

// StanceView is an attestation, a refutation or a verification: who, with what proof, when.
type StanceView struct {
	ID         string     `json:"id"`
	By         Party      `json:"by"`
	AuthorKind string     `json:"author_kind"`
	Evidence   []Evidence `json:"evidence"`
	Note       *string    `json:"note,omitempty"`
	Body       *string    `json:"body,omitempty"`
	At         time.Time  `json:"at"`
	// Signature is the version 1 signature of a stance stored before § 14, absent when there
	// is none; no new stance gets one (a version 1 signature is refused, see refuseSignature).
	Signature *SignatureView `json:"signature,omitempty"`
	// Provenance is what the stance was sent with (§ 15), absent when nothing was given.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Document is a signed stance's document with its proof (§ 14), exactly as checked.
	Document json.RawMessage `json:"document,omitempty"`
}

// ClaimKey formats a claim id.
func ClaimKey(id int64) string { return "cl_" + strconv.FormatInt(id, 10) }

// stanceKey names a stance by its kind (§ 15): att_ (attestation), ref_ (refutation), ver_
// (verification), so that graph nodes of every type have ids of their own.
func stanceKey(s *storage.Stance) string { return StanceKey(s.Kind, s.ID) }

// StanceKey formats the id of a stance of kind (attest, refute, verify).
func StanceKey(kind string, id int64) string {
	prefix := map[string]string{storage.StanceAttest: "att_", storage.StanceRefute: "ref_", storage.StanceVerify: "ver_"}[kind]
	return prefix + strconv.FormatInt(id, 10)
}

// claimViews renders claims with their stances; supersedes maps a claim's id to the ids of
// the claims it superseded, and quorum is verify_quorum.
func claimViews(claims []storage.Claim, stances []storage.Stance, supersedes map[int64][]int64, quorum int, now time.Time) []*ClaimView {
	out := make([]*ClaimView, 0, len(claims))
	byID := make(map[int64]*ClaimView, len(claims))
	for i := range claims {
		v := claimView(&claims[i], supersedes[claims[i].ID], now)
		// A sealed claim keeps the quorum in force when it was sealed (§ 15).
		v.Quorum.Of = quorum
		if claims[i].SealedQuorum != nil {
			v.Quorum.Of = *claims[i].SealedQuorum
		}
		byID[claims[i].ID] = v
		out = append(out, v)
	}
	for i := range stances {
		st := &stances[i]
		v, ok := byID[st.ClaimID]
		if !ok {
			continue
		}
		sv := stanceView(st)
		switch st.Kind {
		case storage.StanceAttest:
			v.Attestations = append(v.Attestations, sv)
		case storage.StanceRefute:
			v.Refutations = append(v.Refutations, sv)
		case storage.StanceVerify:
			v.Verifications = append(v.Verifications, sv)
			v.Quorum.Verifiers++
		}
	}
	return out
}

func claimView(c *storage.Claim, supersedes []int64, now time.Time) *ClaimView {
	expired := Expired(c.ValidUntil, now)
	v := &ClaimView{
		ID:            ClaimKey(c.ID),
		Thread:        ThreadKey(c.ThreadID),
		Anchor:        MessageKey(c.AnchorID),
		Statement:     c.Statement,
		AssertedBy:    Party{Identity: c.Identity, Extension: c.Extension},
		AuthorKind:    c.AuthorKind,
		State:         ClaimState(c.State),
		StateOrigin:   c.StateOrigin,
		Confirmed:     c.StateConfirmedAt != nil,
		Certainty:     Certainty(ClaimState(c.State), expired),
		Expired:       expired,
		ValidUntil:    utc(c.ValidUntil),
		Evidence:      evidenceOf(c.Evidence),
		Supersedes:    []string{},
		Attestations:  []*StanceView{},
		Refutations:   []*StanceView{},
		Verifications: []*StanceView{},
		CreatedAt:     c.CreatedAt.UTC(),
	}
	for _, id := range supersedes {
		v.Supersedes = append(v.Supersedes, ClaimKey(id))
	}
	if c.SupersededBy != nil {
		k := ClaimKey(*c.SupersededBy)
		v.SupersededBy = &k
	}
	if c.ProvenanceModel != nil || c.ProvenanceClient != nil {
		v.Provenance = &Provenance{Model: c.ProvenanceModel, Client: c.ProvenanceClient}
	}
	if c.OriginRealm != nil && c.OriginClaim != nil {
		v.Origin = &ClaimOrigin{Realm: *c.OriginRealm, Claim: *c.OriginClaim}
		if c.OriginThread != nil {
			v.Origin.Thread = *c.OriginThread
		}
		v.Origin.ImportedAt = utc(c.OriginImportedAt)
	}
	return v
}

func stanceView(s *storage.Stance) *StanceView {
	return &StanceView{
		ID:         stanceKey(s),
		By:         Party{Identity: s.Identity, Extension: s.Extension},
		AuthorKind: s.AuthorKind,
		Evidence:   evidenceOf(s.Evidence),
		Note:       s.Note,
		Body:       s.Body,
		At:         s.CreatedAt.UTC(),
		Signature:  signatureView(s),
		Document:   stanceDocument(s),
		Provenance: provenanceOf(s.ProvenanceModel, s.ProvenanceClient),
	}
}

// provenanceOf is a stored provenance, nil when neither field was given.
func provenanceOf(model, client *string) *Provenance {
	if model == nil && client == nil {
		return nil
	}
	return &Provenance{Model: model, Client: client}
}

// stanceDocument is a stored stance's signed document, nil when it has none.
func stanceDocument(s *storage.Stance) json.RawMessage {
	if s.Proof == nil {
		return nil
	}
	return json.RawMessage(*s.Proof)
}

// evidenceOf reads stored evidence; it was written by encodeEvidence, so it always decodes.
func evidenceOf(stored string) []Evidence {
	out := []Evidence{}
	_ = json.Unmarshal([]byte(stored), &out)
	return out
}

func encodeEvidence(items []Evidence) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// supersedesOf maps each claim that superseded others (among claims) to them.
func supersedesOf(claims []storage.Claim) map[int64][]int64 {
	out := map[int64][]int64{}
	for _, c := range claims {
		if c.SupersededBy != nil {
			out[*c.SupersededBy] = append(out[*c.SupersededBy], c.ID)
		}
	}
	return out
}
