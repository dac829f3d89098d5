// Package graph is the claim graph of Parley's dialectic profile as researchers read it:
// nodes (claims, attestations, refutations, verifications, messages) and typed edges, Dung's
// grounded labelling over them, and the export formats — native JSON, GraphML, DOT and AIF.
// It knows nothing of storage or of the protocol's rules: it is given the graph and writes it.
package graph

import (
	"encoding/json"
	"time"
)

// Node types.
const (
	TypeClaim        = "claim"
	TypeAttestation  = "attestation"
	TypeRefutation   = "refutation"
	TypeVerification = "verification"
	TypeMessage      = "message"
)

// Edge kinds: attestation supports claim, refutation refutes claim, verification verifies
// claim, newer claim supersedes older claim, claim anchored_in message.
const (
	EdgeSupports   = "supports"
	EdgeRefutes    = "refutes"
	EdgeVerifies   = "verifies"
	EdgeSupersedes = "supersedes"
	EdgeAnchoredIn = "anchored_in"
)

// Graph is the native JSON graph: { "nodes": [...], "edges": [...] }.
type Graph struct {
	Nodes []*Node `json:"nodes"`
	Edges []*Edge `json:"edges"`
}

// Evidence is one pointer of proof.
type Evidence struct {
	Kind string  `json:"kind"`
	Ref  string  `json:"ref"`
	Note *string `json:"note,omitempty"`
}

// Node is one node. Claims carry statement, state, certainty, expired, asserted_by,
// grounded and (imported) origin; attestations, refutations and verifications carry by, evidence and text (their
// note or body); messages carry by, kind and text (their body). Every node has its thread
// and its time.
type Node struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Thread     string     `json:"thread"`
	Statement  string     `json:"statement,omitempty"`
	State      string     `json:"state,omitempty"`
	Certainty  string     `json:"certainty,omitempty"`
	Expired    *bool      `json:"expired,omitempty"`
	AssertedBy string     `json:"asserted_by,omitempty"`
	Grounded   Label      `json:"grounded,omitempty"`
	By         string     `json:"by,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Text       string     `json:"text,omitempty"`
	Evidence   []Evidence `json:"evidence,omitempty"`
	At         time.Time  `json:"at"`
	// Signature is a version 1 signature of an attestation or a verification, stored before
	// signed stances version 2 (PROTOCOL.md § 14): exports call it legacy_signature.
	Signature *Signature `json:"legacy_signature,omitempty"`
	// Document is a signed stance's document with its proof (§ 14).
	Document json.RawMessage `json:"document,omitempty"`
	// Provenance is what the author's write said of its model and client (§ 15), absent
	// when it said nothing.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Folded is how many stances on this claim a drawing leaves out (Fit): a drawing's
	// matter, never exported.
	Folded int `json:"-"`
	// Origin is where a claim imported from another realm was first made (§ 14), absent for
	// this forum's own claims and for every other node.
	Origin *Origin `json:"origin,omitempty"`
}

// Origin is an imported claim's realm, and the claim and its thread there.
type Origin struct {
	Realm  string `json:"realm"`
	Claim  string `json:"claim"`
	Thread string `json:"thread"`
}

// OriginRealm, OriginClaim and OriginThread are a node's origin fields, "" when it has none.
func (n *Node) OriginRealm() string {
	if n.Origin == nil {
		return ""
	}
	return n.Origin.Realm
}

func (n *Node) OriginClaim() string {
	if n.Origin == nil {
		return ""
	}
	return n.Origin.Claim
}

func (n *Node) OriginThread() string {
	if n.Origin == nil {
		return ""
	}
	return n.Origin.Thread
}

// Provenance is an author's model and client, each as given.
type Provenance struct {
	Model  *string `json:"model,omitempty"`
	Client *string `json:"client,omitempty"`
}

// ProvenanceModel and ProvenanceClient are a node's provenance fields, "" when absent.
func (n *Node) ProvenanceModel() string {
	if n.Provenance == nil || n.Provenance.Model == nil {
		return ""
	}
	return *n.Provenance.Model
}

func (n *Node) ProvenanceClient() string {
	if n.Provenance == nil || n.Provenance.Client == nil {
		return ""
	}
	return *n.Provenance.Client
}

// Edge is one typed edge.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

// Attacks are the attacks of the argument framework the graph defines (see Label): a
// refutation attacks the claim it refutes, and a newer claim attacks each claim it
// supersedes. Support, verification and anchoring are no attacks.
func (g *Graph) Attacks() []Attack {
	var out []Attack
	for _, e := range g.Edges {
		if e.Kind == EdgeRefutes || e.Kind == EdgeSupersedes {
			out = append(out, Attack{From: e.From, To: e.To})
		}
	}
	return out
}

// Arguments are the claims and refutations, the arguments of the framework.
func (g *Graph) Arguments() []string {
	var out []string
	for _, n := range g.Nodes {
		if n.Type == TypeClaim || n.Type == TypeRefutation {
			out = append(out, n.ID)
		}
	}
	return out
}

// LabelGrounded sets each claim's and refutation's grounded label.
func (g *Graph) LabelGrounded() {
	labels := Grounded(g.Arguments(), g.Attacks())
	for _, n := range g.Nodes {
		if l, ok := labels[n.ID]; ok {
			n.Grounded = l
		}
	}
}
