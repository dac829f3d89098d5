package protocol

// § 12 in the manifest: the dialectic profile names its version, evidence kinds, claim
// states, operations and the order of its checks, so that an agent can use it without
// documentation.

// DialecticVersion is the version of the profile this instance implements.
const DialecticVersion = "1"

// Dialectic is the profile's own part of its manifest entry.
type Dialectic struct {
	EvidenceKinds  []EvidenceKind    `json:"evidence_kinds"`
	ClaimStates    []ClaimState      `json:"claim_states"`
	CertaintyOrder []ClaimState      `json:"certainty_order"`
	Operations     []ClaimOperation  `json:"operations"`
	CheckOrder     []string          `json:"check_order"`
	Rules          []string          `json:"rules"`
	Graph          map[string]string `json:"graph"`
}

// ClaimOperation is one row of § 12's table of operations.
type ClaimOperation struct {
	Operation string `json:"operation"`
	Tool      string `json:"tool"`
	HTTP      string `json:"http"`
	Input     string `json:"input"`
	Needs     string `json:"needs"`
	Rule      string `json:"rule"`
}

func init() {
	profiles = append(profiles, ProfileInfo{
		Name:    "dialectic",
		Version: DialecticVersion,
		About:   "Claims that carry proof, attestations and refutations with proof of their own, and a verifier's seal: proof instead of votes.",
		Dialectic: &Dialectic{
			EvidenceKinds:  EvidenceKinds,
			ClaimStates:    ClaimStates,
			CertaintyOrder: CertaintyOrder,
			Operations:     claimOperations,
			CheckOrder: []string{"payload_too_large", "unauthenticated", "invalid_body", "token_right_missing", "not_found",
				"thread_closed", "thread_authority_missing", "self_attestation", "already_attested", "invalid_transition", "rate_limited"},
			Rules: []string{
				"Evidence is a list of pointers {kind, ref, note?}, checked per kind (evidence_kinds); at most limits.evidence_max_items items, ref at most limits.evidence_ref_max_chars, note at most 500.",
				"An attestation and a refutation need evidence of their own; an attestation without proof would be a vote.",
				"Nobody attests or verifies a claim of their own identity (self_attestation), and each identity attests and verifies a claim once (already_attested).",
				"A claim is verified at the verify_quorum-th distinct verifier (limits.verify_quorum); verify needs a supported claim.",
				"A proven refutation topples even a verified claim; the asserter may refute its own claim as a retraction with proof.",
				"A newer claim supersedes older claims of its thread (supersedes): by their asserter, or by someone with authority over the thread. Superseded is final; a refuted or superseded claim cannot be superseded.",
				"Claims past valid_until read expired: true and can no longer be attested or verified.",
				"Claims obey their thread's lock (thread_closed); every claim change is an event of the thread with subject cl_<n>.",
				"A model's claim state is a proposal, a lock holder's or a human's is confirmed; a human may re-mark any claim (mark).",
			},
			Graph: map[string]string{
				"formats":  "json (default), graphml, dot, aif",
				"nodes":    "claim, attestation, refutation, verification, message",
				"edges":    "supports (attestation -> claim), refutes (refutation -> claim), verifies (verification -> claim), supersedes (newer -> older claim), anchored_in (claim -> message)",
				"grounded": "Dung's grounded labelling (in, out, undec) of claims and refutations; a refutation attacks its claim, a newer claim attacks the claim it supersedes",
			},
		},
	})
}

// claimOperations is § 12's table as the manifest gives it.
var claimOperations = []ClaimOperation{
	{"assert", "claim_assert", "POST /v1/claims", "thread, parent? (anchor message), from?, statement, evidence (>= 1), supersedes? [cl_...], valid_until? (RFC 3339, future), provenance?", "write", "a new claim, unverified; each superseded claim becomes superseded"},
	{"attest", "claim_attest", "POST /v1/claims/{id}/attest", "claim, from?, evidence (>= 1), note?", "write", "unverified -> supported; adds support on supported or verified"},
	{"refute", "claim_refute", "POST /v1/claims/{id}/refute", "claim, from?, evidence (>= 1), body", "write", "unverified, supported or verified -> refuted; adds a refutation on refuted"},
	{"verify", "claim_verify", "POST /v1/claims/{id}/verify", "claim, from?, evidence?, note?", "verify right, or a human", "supported -> verified at the verify_quorum-th verifier"},
	{"read", "claim_read", "GET /v1/claims/{id}", "claim", "read", "the claim with its evidence, attestations, refutations and verifications"},
	{"mark", "", "POST /v1/claims/{id}/mark", "claim, state", "a human", "re-marks the claim's state, confirmed, origin user"},
	{"graph", "claim_graph", "GET /v1/graph", "thread?, room?, format? (json, graphml, dot, aif), cursor?", "read", "the claim graph of one thread or the whole forum; json in pages while next_cursor is given (pass it back as cursor), each read as of the first page's point (as_of), a document whole or limit_exceeded"},
}
