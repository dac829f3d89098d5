package graph

import (
	"errors"
	"fmt"

	"github.com/parleyforum/parley/signed"
)

// The signatures a graph carries (§ 13 signed): each signed attestation and verification
// with its key, so that anyone can check them offline, without the server.

// Signature is a stance's signature: the key's id and public key (base64), the signing
// time as signed and the signature (base64).
type Signature struct {
	Key       string `json:"key"`
	PublicKey string `json:"public_key"`
	At        string `json:"at"`
	Sig       string `json:"sig"`
}

// SignedStance is everything checking one signature needs: the stance and the claim it
// supports or verifies, the claim's statement, and the stance's identity, evidence and
// signature.
type SignedStance struct {
	Stance    string     `json:"stance"`
	Claim     string     `json:"claim"`
	Statement string     `json:"-"`
	By        string     `json:"by"`
	Evidence  []Evidence `json:"evidence"`
	Signature Signature  `json:"signature"`
	// fault, when set, is why the graph itself does not let the signature be checked.
	fault error
}

// Check answers nil when the signature holds over its claim's statement, the identity, the
// evidence and the time, with its public key.
func (s *SignedStance) Check() error {
	if s.fault != nil {
		return s.fault
	}
	items := make([]signed.Evidence, len(s.Evidence))
	for i, e := range s.Evidence {
		items[i] = signed.Evidence{Kind: e.Kind, Ref: e.Ref, Note: e.Note}
	}
	return signed.VerifyLegacy(s.Signature.PublicKey, s.Signature.Sig,
		signed.NewPayload(s.Claim, s.Statement, items, s.By, s.Signature.At))
}

// SignedStances lists the graph's signatures in the order of its nodes, each tied to the
// claim its stance supports or verifies.
func (g *Graph) SignedStances() []*SignedStance {
	nodes := map[string]*Node{}
	for _, n := range g.Nodes {
		nodes[n.ID] = n
	}
	edges := map[string]*Edge{}
	for _, e := range g.Edges {
		if e.Kind == EdgeSupports || e.Kind == EdgeVerifies {
			edges[e.From] = e
		}
	}
	var out []*SignedStance
	for _, n := range g.Nodes {
		if n.Signature == nil {
			continue
		}
		var claim *Node
		if e, ok := edges[n.ID]; ok {
			claim = nodes[e.To]
		}
		out = append(out, signedStanceOf(n, edges[n.ID], claim))
	}
	return out
}

// signedStanceOf is the signature of the stance n, whose edge to its claim is e (nil when it
// has none that a signature covers) and claim that claim's node (nil when the graph lacks it).
func signedStanceOf(n *Node, e *Edge, claim *Node) *SignedStance {
	s := &SignedStance{Stance: n.ID, By: n.By, Evidence: n.Evidence, Signature: *n.Signature}
	if e != nil && (e.Kind == EdgeSupports || e.Kind == EdgeVerifies) {
		s.Claim = e.To
	}
	if s.Evidence == nil {
		s.Evidence = []Evidence{}
	}
	switch {
	case n.Type != TypeAttestation && n.Type != TypeVerification:
		s.fault = fmt.Errorf("a %s carries a signature, but only attestations and verifications are signed", n.Type)
	case s.Claim == "" || claim == nil || claim.ID != s.Claim || claim.Type != TypeClaim:
		s.fault = errors.New("the claim it supports or verifies is not in the graph")
	default:
		s.Statement = claim.Statement
	}
	return s
}
