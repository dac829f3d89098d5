package graph

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/goccy/go-graphviz"
)

// The tests that read DOT with Graphviz do so in this process's own instance, which reads one
// graph at a time: renderer is that instance, rendering its turn. Drawings never use it: they
// run in processes of their own.
var (
	rendering    sync.Mutex
	rendererOnce = sync.OnceValues(func() (*graphviz.Graphviz, error) { return graphviz.New(context.Background()) })
)

func renderer(context.Context) (*graphviz.Graphviz, error) { return rendererOnce() }

// thread is a thread of claims claims anchored in one question, each with stances stances
// (attestations, every third a refutation, every seventh a verification), every fifth claim
// superseding the one before: the largest thread the limits allow is thread(200, 100).
func thread(claims, stances int) *Graph {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	no := false
	g := &Graph{Nodes: []*Node{{ID: "msg_1", Type: TypeMessage, Thread: "th_1", By: "ainotes:alice", Kind: "ask", Text: "Which port does parley serve listen on, and why?", At: at}}}
	n := 0
	for i := 1; i <= claims; i++ {
		id := "cl_" + strconv.Itoa(i)
		g.Nodes = append(g.Nodes, &Node{ID: id, Type: TypeClaim, Thread: "th_1", State: "supported", Certainty: "supported", Expired: &no, AssertedBy: "ainotes:alice",
			Statement: fmt.Sprintf("parley serve listens on port %d by default unless PARLEY_ADDR names another address", 8000+i), At: at})
		g.Edges = append(g.Edges, &Edge{From: id, To: "msg_1", Kind: EdgeAnchoredIn})
		if i%5 == 0 {
			g.Edges = append(g.Edges, &Edge{From: id, To: "cl_" + strconv.Itoa(i-1), Kind: EdgeSupersedes})
		}
		for s := range stances {
			n++
			typ, kind := TypeAttestation, EdgeSupports
			switch {
			case s%7 == 6:
				typ, kind = TypeVerification, EdgeVerifies
			case s%3 == 2:
				typ, kind = TypeRefutation, EdgeRefutes
			}
			sid := fmt.Sprintf("st_%d", n)
			g.Nodes = append(g.Nodes, &Node{ID: sid, Type: typ, Thread: "th_1", By: "ainotes:bob", Text: "reproduced on a fresh checkout of the main branch", At: at})
			g.Edges = append(g.Edges, &Edge{From: sid, To: id, Kind: kind})
		}
	}
	g.LabelGrounded()
	return g
}
