package graph

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/parleyforum/parley/jsonstream"
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
// write gave none; an imported claim's I-node carries its origin (§ 14) as the member
// "origin". Readers of AIF that do not know them pass them by.

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
	// Origin is an imported claim's, on its I-node (§ 14).
	Origin *Origin `json:"origin,omitempty"`
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

// AIFMembers writes the members of the AIF document from a source, each member in a pass or
// two over it, so that none is held whole: what the export streams in JCS order and WriteAIF
// in the struct's. Participants are numbered in the order they first assert a claim.
type AIFMembers struct {
	src    Source
	people map[string]string
	order  []string
}

// NewAIFMembers reads src for AIF.
func NewAIFMembers(src Source) *AIFMembers { return &AIFMembers{src: src} }

// aifTime is a time as AIF writes it.
func aifTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// Nodes puts each claim's I-node, the L-node that asserts it and its YA-node, then each
// stance's premise (an I-node) and scheme node, and each supersession's MA-node.
func (a *AIFMembers) Nodes(put func(any) error) error {
	err := a.src.EachNode(func(n *Node) error {
		if n.Type != TypeClaim {
			return nil
		}
		for _, v := range []AIFNode{
			{NodeID: n.ID, Text: n.Statement, Type: "I", Timestamp: aifTime(n.At), Origin: n.Origin},
			{NodeID: "l_" + n.ID, Text: n.AssertedBy + ": " + n.Statement, Type: "L", Timestamp: aifTime(n.At), Provenance: n.Provenance},
			{NodeID: "ya_" + n.ID, Text: "Asserting", Type: "YA", Timestamp: aifTime(n.At)},
		} {
			if err := put(v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return a.src.EachEdge(func(e *Edge, from, _ *Node) error {
		switch e.Kind {
		case EdgeSupports, EdgeVerifies, EdgeRefutes:
			scheme := aifScheme[from.Type]
			if err := put(AIFNode{NodeID: "i_" + from.ID, Text: stanceText(from), Type: "I", Timestamp: aifTime(from.At), Provenance: from.Provenance}); err != nil {
				return err
			}
			return put(AIFNode{NodeID: strings.ToLower(scheme.typ) + "_" + from.ID, Text: scheme.text, Type: scheme.typ, Timestamp: aifTime(from.At)})
		case EdgeSupersedes:
			return put(AIFNode{NodeID: "ma_" + e.From + "_" + e.To, Text: "Default Rephrase", Type: "MA", Timestamp: aifTime(from.At)})
		}
		return nil
	})
}

// Edges puts the edges of Nodes, numbered in that order: each claim's L → YA → I, then each
// stance's premise → scheme → claim and each supersession's newer → MA → older.
func (a *AIFMembers) Edges(put func(any) error) error {
	count := 0
	edge := func(from, to string) error {
		count++
		return put(AIFEdge{EdgeID: "e" + strconv.Itoa(count), FromID: from, ToID: to})
	}
	err := a.src.EachNode(func(n *Node) error {
		if n.Type != TypeClaim {
			return nil
		}
		if err := edge("l_"+n.ID, "ya_"+n.ID); err != nil {
			return err
		}
		return edge("ya_"+n.ID, n.ID)
	})
	if err != nil {
		return err
	}
	return a.src.EachEdge(func(e *Edge, from, _ *Node) error {
		switch e.Kind {
		case EdgeSupports, EdgeVerifies, EdgeRefutes:
			scheme := strings.ToLower(aifScheme[from.Type].typ) + "_" + from.ID
			if err := edge("i_"+from.ID, scheme); err != nil {
				return err
			}
			return edge(scheme, e.To)
		case EdgeSupersedes:
			ma := "ma_" + e.From + "_" + e.To
			if err := edge(e.From, ma); err != nil {
				return err
			}
			return edge(ma, e.To)
		}
		return nil
	})
}

// Locutions puts each claim's locution: its L-node, said by its asserter.
func (a *AIFMembers) Locutions(put func(any) error) error {
	a.people, a.order = map[string]string{}, nil
	return a.src.EachNode(func(n *Node) error {
		if n.Type != TypeClaim {
			return nil
		}
		return put(AIFLocution{NodeID: "l_" + n.ID, PersonID: a.person(n.AssertedBy), Timestamp: aifTime(n.At), Provenance: n.Provenance})
	})
}

// person is an identity's participant id, given in order of first assertion.
func (a *AIFMembers) person(identity string) string {
	if id, ok := a.people[identity]; ok {
		return id
	}
	id := "p" + strconv.Itoa(len(a.people)+1)
	a.people[identity] = id
	a.order = append(a.order, identity)
	return id
}

// Participants puts every identity that asserted a claim, numbered as Locutions numbered
// them (it reads the claims itself when Locutions has not).
func (a *AIFMembers) Participants(put func(any) error) error {
	if a.people == nil {
		if err := a.Locutions(func(any) error { return nil }); err != nil {
			return err
		}
	}
	for _, identity := range a.order {
		if err := put(AIFParticipant{ParticipantID: a.people[identity], FirstName: identity}); err != nil {
			return err
		}
	}
	return nil
}

// Signatures puts the version 1 signatures, each naming the claim its stance supports or
// verifies (SignedStances, as a stream).
func (a *AIFMembers) Signatures(put func(any) error) error {
	return a.src.EachEdge(func(e *Edge, from, to *Node) error {
		if from == nil || from.Signature == nil || !stanceEdge(e.Kind) {
			return nil
		}
		return put(signedStanceOf(from, e, to))
	})
}

// stanceEdge reports whether an edge of kind goes from a stance to its claim.
func stanceEdge(kind string) bool {
	return kind == EdgeSupports || kind == EdgeVerifies || kind == EdgeRefutes
}

// WriteAIF writes the graph as AIF JSON, indented, a node or an edge at a time.
func WriteAIF(w io.Writer, src Source) error {
	jw := jsonstream.New(w, jsonstream.Options{Indent: "  "})
	a := NewAIFMembers(src)
	for _, m := range []struct {
		name      string
		omitEmpty bool
		each      func(func(any) error) error
	}{
		{"nodes", false, a.Nodes}, {"edges", false, a.Edges}, {"locutions", false, a.Locutions},
		{"participants", false, a.Participants}, {"signatures", true, a.Signatures},
	} {
		if err := jw.Array(m.name, m.omitEmpty, m.each); err != nil {
			return err
		}
	}
	return jw.Close()
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
