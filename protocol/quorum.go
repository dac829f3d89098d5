package protocol

// § 13 quorum: a claim is verified at the verify_quorum-th distinct verifier (the rule is
// ClaimNext's), and every claim reads how far it is.

// QuorumVersion is the version of the profile this instance implements.
const QuorumVersion = "1"

// Quorum is how far a claim is towards its seal: Verifiers distinct verifiers of the Of
// (verify_quorum) it needs — "k of N".
type Quorum struct {
	Verifiers int `json:"verifiers"`
	Of        int `json:"of"`
}

func init() {
	profiles = append(profiles, ProfileInfo{
		Name:    "quorum",
		Version: QuorumVersion,
		About:   "A claim is verified at the N-th distinct verifier, N being limits.verify_quorum.",
		Parameters: map[string]string{
			"verify_quorum": "limits.verify_quorum: the distinct verifiers a supported claim needs to become verified",
			"claim":         "every claim reads quorum {verifiers, of}: k of N; each identity verifies a claim once (already_attested)",
		},
	})
}
