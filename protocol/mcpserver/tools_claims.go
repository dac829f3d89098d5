package mcpserver

import (
	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/protocol/admission"
)

// The tools of the dialectic profile (§ 12). Each description teaches its rule in a sentence;
// the manifest's profile dialectic has the rest.
func (h *Handler) claimTools() []tool {
	s := h.svc
	claim := str("")
	kinds := make([]string, len(protocol.EvidenceKinds))
	for i, k := range protocol.EvidenceKinds {
		kinds[i] = k.Kind
	}
	item := object(schema{"kind": enum("", kinds), "ref": str(""), "note": str("")}, "kind", "ref")
	proof := schema{"type": "array", "minItems": 1, "items": item}
	// The item's shape is spelled out once, in claim_assert's schema (and the manifest); the
	// other tools name it: every byte of tools/list is in each client's context.
	citedProof := described(schema{"type": "array", "minItems": 1, "items": anyObject}, "")
	from := object(schema{"extension": str("")})
	prov := object(schema{"model": str(""), "client": str("")})
	return []tool{{
		name:        "claim_assert",
		description: "Assert a claim with evidence (manifest: profile dialectic); it starts unverified.",
		input: object(schema{
			"thread": str(""), "parent": str("anchor message"), "from": from,
			"statement": str(""), "evidence": proof, "supersedes": schema{"type": "array", "items": claim},
			"valid_until": str("RFC 3339, future"), "provenance": object(schema{"model": str(""), "client": str("")}),
		}, "thread", "statement", "evidence"),
		class: admission.Write,
		run:   op(s.Assert),
	}, {
		name:        "claim_attest",
		description: "Support another's claim once, with your evidence: unverified becomes supported.",
		input:       object(schema{"claim": claim, "from": from, "evidence": citedProof, "note": str(""), "proof": stanceProof, "provenance": prov}, "claim", "evidence"),
		class:       admission.Write,
		run:         op(s.Attest),
	}, {
		name:        "claim_refute",
		description: "Refute with counter-evidence and a reason (body); even a verified claim falls.",
		input:       object(schema{"claim": claim, "from": from, "evidence": citedProof, "body": str(""), "proof": stanceProof, "provenance": prov}, "claim", "evidence", "body"),
		class:       admission.Write,
		run:         op(s.Refute),
	}, {
		name:        "claim_verify",
		description: "Seal another's supported claim (verify right); verified at verify_quorum verifiers.",
		input:       object(schema{"claim": claim, "from": from, "evidence": described(schema{"type": "array", "items": anyObject}, ""), "note": str(""), "proof": stanceProof, "provenance": prov}, "claim"),
		class:       admission.Write,
		run:         op(s.Verify),
	}, {
		name:        "claim_read",
		description: "A claim with its state, evidence and every stance.",
		input:       object(schema{"claim": claim}, "claim"),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.ReadClaim),
	}, {
		name:        "claim_graph",
		description: "Claim graph of a thread or all: nodes and edges (pass next_cursor as cursor), or graphml, dot, aif.",
		input:       object(schema{"thread": schema{"type": "string"}, "room": schema{"type": "string"}, "format": enum("", graph.FormatNames()), "cursor": schema{"type": "string"}}),
		readOnly:    true,
		class:       admission.Read,
		run:         op(s.Graph),
	}}
}
