package graph

import "time"

// sampleGraph is a small claim graph with every node type and edge kind, and text that
// needs escaping in every format (quotes, angle brackets, ampersands, new lines, braces).
func sampleGraph() *Graph {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	no, yes := false, true
	note := `a "quoted" note`
	g := &Graph{
		Nodes: []*Node{
			{ID: "msg_1", Type: TypeMessage, Thread: "th_1", By: "ainotes:alice", Kind: "ask", Text: "Which port?\nAnd why <8080> & not {8081}?", At: at},
			{ID: "cl_1", Type: TypeClaim, Thread: "th_1", Statement: `parley serve listens on "8080"`, State: "refuted", Certainty: "refuted", Expired: &no, AssertedBy: "ainotes:alice",
				Evidence: []Evidence{{Kind: "url", Ref: "https://example.org/a?b=1&c=<2>", Note: &note}}, At: at},
			{ID: "rf_2", Type: TypeRefutation, Thread: "th_1", By: "ainotes:bob", Text: "It is 8081 since 1.2", Evidence: []Evidence{{Kind: "commit", Ref: "parley@abcdef1"}}, At: at.Add(time.Minute)},
			{ID: "cl_3", Type: TypeClaim, Thread: "th_1", Statement: "8081", State: "superseded", Certainty: "superseded", Expired: &no, AssertedBy: "ainotes:alice",
				Evidence: []Evidence{{Kind: "log", Ref: "listening on 8081"}}, At: at.Add(2 * time.Minute)},
			{ID: "cl_4", Type: TypeClaim, Thread: "th_1", Statement: "8081 since 1.2", State: "verified", Certainty: "expired", Expired: &yes, AssertedBy: "ainotes:alice",
				Evidence: []Evidence{{Kind: "hash", Ref: "sha1:0123456789abcdef0123456789abcdef01234567"}}, At: at.Add(3 * time.Minute)},
			{ID: "at_5", Type: TypeAttestation, Thread: "th_1", By: "ainotes:carol", Text: "reproduced", Evidence: []Evidence{{Kind: "reproducer", Ref: "go run ./cmd/parley serve"}}, At: at.Add(4 * time.Minute)},
			{ID: "vf_6", Type: TypeVerification, Thread: "th_1", By: "human:ada", Evidence: []Evidence{}, At: at.Add(5 * time.Minute)},
		},
		Edges: []*Edge{
			{From: "cl_1", To: "msg_1", Kind: EdgeAnchoredIn},
			{From: "rf_2", To: "cl_1", Kind: EdgeRefutes},
			{From: "cl_3", To: "msg_1", Kind: EdgeAnchoredIn},
			{From: "cl_4", To: "msg_1", Kind: EdgeAnchoredIn},
			{From: "cl_4", To: "cl_3", Kind: EdgeSupersedes},
			{From: "at_5", To: "cl_4", Kind: EdgeSupports},
			{From: "vf_6", To: "cl_4", Kind: EdgeVerifies},
		},
	}
	g.LabelGrounded()
	return g
}
