package graph

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"
)

// AIF, the Argument Interchange Format, in the JSON form AIFdb and OVA use: nodes with
// nodeID, text, type and timestamp; edges from fromID to toID; locutions tying L-nodes to
// participants. Claims are I-nodes (information); an attestation or a verification is an
// RA-node (inference) from an I-node holding its proof to the claim; a refutation a CA-node
// (conflict) from an I-node holding its counter-proof; a supersession an MA-node (rephrase)
// from the newer claim to the older; each claim's assertion an L-node (locution) that asserts
// it through a YA-node. Messages have no place in AIF's argument structure and are left out.
// Wherever AIF names an author — a claim's L-node and locution, a stance's premise — it
// carries the author's provenance (§ 15) as Parley's own member "provenance", absent when the
// write gave none; readers of AIF that do not know it pass it by.

// AIF is the document.
type AIF struct {
	Nodes        []AIFNode        `json:"nodes"`
	Edges        []AIFEdge        `json:"edges"`
	Locutions    []AIFLocution    `json:"locutions"`
	Participants []AIFParticipant `json:"participants"`
	// Signatures are the signed attestations and verifications (§ 13 signed), each naming
	// its claim's I-node, so that they can be checked offline; absent when there are none.
	Signatures []*SignedStance `json:"signatures,omitempty"`
}

// AIFNode is one node; Type is I, RA, CA, MA, L or YA.
type AIFNode struct {
	NodeID    string `json:"nodeID"`
	Text      string `json:"text"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	// Provenance is the author's, on an L-node and on a stance's premise.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// AIFEdge is one edge.
type AIFEdge struct {
	EdgeID string `json:"edgeID"`
	FromID string `json:"fromID"`
	ToID   string `json:"toID"`
}

// AIFLocution ties an L-node to the participant who said it.
type AIFLocution struct {
	NodeID    string `json:"nodeID"`
	PersonID  string `json:"personID"`
	Timestamp string `json:"timestamp"`
	// Provenance is what the claim's author said of its model and client.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// AIFParticipant is one identity.
type AIFParticipant struct {
	ParticipantID string `json:"participantID"`
	FirstName     string `json:"firstname"`
	Surname       string `json:"surname"`
}

// aifScheme names the scheme node each stance becomes.
var aifScheme = map[string]struct{ typ, text string }{
	TypeAttestation:  {"RA", "Default Inference"},
	TypeVerification: {"RA", "Default Inference"},
	TypeRefutation:   {"CA", "Default Conflict"},
}

// ToAIF maps g onto AIF.
func ToAIF(g *Graph) *AIF {
	doc := &AIF{Nodes: []AIFNode{}, Edges: []AIFEdge{}, Locutions: []AIFLocution{}, Participants: []AIFParticipant{}}
	people := map[string]string{}
	person := func(identity string) string {
		if id, ok := people[identity]; ok {
			return id
		}
		id := "p" + strconv.Itoa(len(people)+1)
		people[identity] = id
		doc.Participants = append(doc.Participants, AIFParticipant{ParticipantID: id, FirstName: identity})
		return id
	}
	node := func(id, text, typ string, at time.Time, p *Provenance) {
		doc.Nodes = append(doc.Nodes, AIFNode{NodeID: id, Text: text, Type: typ, Timestamp: at.UTC().Format("2006-01-02 15:04:05"), Provenance: p})
	}
	edge := func(from, to string) {
		doc.Edges = append(doc.Edges, AIFEdge{EdgeID: "e" + strconv.Itoa(len(doc.Edges)+1), FromID: from, ToID: to})
	}
	byID := map[string]*Node{}
	for _, n := range g.Nodes {
		byID[n.ID] = n
		if n.Type != TypeClaim {
			continue
		}
		node(n.ID, n.Statement, "I", n.At, nil)
		l, ya := "l_"+n.ID, "ya_"+n.ID
		node(l, n.AssertedBy+": "+n.Statement, "L", n.At, n.Provenance)
		node(ya, "Asserting", "YA", n.At, nil)
		edge(l, ya)
		edge(ya, n.ID)
		doc.Locutions = append(doc.Locutions, AIFLocution{NodeID: l, PersonID: person(n.AssertedBy),
			Timestamp: n.At.UTC().Format("2006-01-02 15:04:05"), Provenance: n.Provenance})
	}
	for _, e := range g.Edges {
		from := byID[e.From]
		switch e.Kind {
		case EdgeSupports, EdgeVerifies, EdgeRefutes:
			scheme := aifScheme[from.Type]
			premise, s := "i_"+from.ID, strings.ToLower(scheme.typ)+"_"+from.ID
			node(premise, stanceText(from), "I", from.At, from.Provenance)
			node(s, scheme.text, scheme.typ, from.At, nil)
			edge(premise, s)
			edge(s, e.To)
		case EdgeSupersedes:
			s := "ma_" + e.From + "_" + e.To
			node(s, "Default Rephrase", "MA", from.At, nil)
			edge(e.From, s)
			edge(s, e.To)
		}
	}
	doc.Signatures = g.SignedStances()
	return doc
}

// stanceText is the premise an attestation, verification or refutation contributes: what it
// says and the pointers of its proof.
func stanceText(n *Node) string {
	parts := []string{n.Type + " by " + n.By}
	if n.Text != "" {
		parts = append(parts, n.Text)
	}
	for _, e := range n.Evidence {
		parts = append(parts, e.Kind+": "+e.Ref)
	}
	return strings.Join(parts, "; ")
}

// WriteAIF writes g as AIF JSON.
func WriteAIF(w io.Writer, g *Graph) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(ToAIF(g))
}
