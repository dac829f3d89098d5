package mcpserver

import "github.com/parleyforum/parley/protocol/admission"

// The tools of the artifacts and signed profiles (§ 13, § 14): the same operations as PUT
// and GET /v1/artifacts and PUT /v1/keys, and the proof that claim_attest, claim_refute and
// claim_verify take. The manifest's profiles artifacts and signed have the details, so that tools/list,
// which is in every client's context, stays small.
func (h *Handler) evidenceTools() []tool {
	s := h.svc
	return []tool{{
		name:        "artifact_put",
		description: "Store bytes (a log, an output); cite its ref as evidence of kind artifact.",
		input:       object(schema{"content_base64": str(""), "media_type": str("default octet-stream")}, "content_base64"),
		checkSize:   s.CheckArtifactInputSize,
		class:       admission.Write,
		run:         op(s.PutArtifactInput),
	}, {
		name:        "artifact_get",
		description: "A stored artifact by its ref, the bytes as content_base64.",
		input:       object(schema{"ref": str("sha256:<64 hex>")}, "ref"),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.GetArtifact),
	}, {
		name:        "key_register",
		description: "Register your Ed25519 key to sign stances (profile signed).",
		input:       object(schema{"public_key": str("base64, 32 bytes")}, "public_key"),
		class:       admission.Write,
		run:         op(s.RegisterKey),
	}}
}

// stanceProof is a signed stance's proof (§ 14): its shape is in the manifest's signed profile.
// Its members are checked by the server (invalid_body names a missing or wrong one); the
// schema names it alone, since every byte of tools/list is in each client's context.
var stanceProof = schema{"description": "eddsa-jcs-2022 proof"}
