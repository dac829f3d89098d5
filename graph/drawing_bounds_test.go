//go:build unix

package graph

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A graph within the bound is drawn whole; a larger one keeps the same number of stances on
// every claim and counts the rest on their claims, within the bound, the graph it came from
// unchanged; one that does not fit even without stances says so.
func TestFitFoldsStancesBeyondTheBound(t *testing.T) {
	for _, tc := range []struct {
		name            string
		claims, stances int
		bound           Bound
		wantFolded      int
		wantFits        bool
	}{
		{"small", 20, 3, DrawingBound, 0, true},
		{"largest thread", 200, 100, DrawingBound, 200 * (100 - 3), true}, // 1 + 200 + 200×3 = 801 nodes
		{"by edges", 10, 10, Bound{Nodes: 1000, Edges: 10 + 2 + 10*4}, 10 * 6, true},
		{"claims alone too many", 50, 1, Bound{Nodes: 40, Edges: 1000}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := thread(tc.claims, tc.stances)
			nodes, edges := len(g.Nodes), len(g.Edges)
			drawn, folded, fits := g.Fit(tc.bound)
			if fits != tc.wantFits || folded != tc.wantFolded {
				t.Fatalf("Fit = %d folded, fits %v; want %d, %v", folded, fits, tc.wantFolded, tc.wantFits)
			}
			if len(g.Nodes) != nodes || len(g.Edges) != edges {
				t.Fatal("Fit changed the graph it was given")
			}
			if !fits {
				return
			}
			if len(drawn.Nodes) > tc.bound.Nodes || len(drawn.Edges) > tc.bound.Edges {
				t.Errorf("drawn: %d nodes, %d edges; the bound is %+v", len(drawn.Nodes), len(drawn.Edges), tc.bound)
			}
			if len(drawn.Nodes) != nodes-folded || len(drawn.Edges) != edges-folded {
				t.Errorf("drawn: %d nodes, %d edges of %d, %d with %d folded", len(drawn.Nodes), len(drawn.Edges), nodes, edges, folded)
			}
			counted, ids := 0, map[string]bool{}
			for _, n := range drawn.Nodes {
				counted += n.Folded
				ids[n.ID] = true
			}
			for _, e := range drawn.Edges {
				if !ids[e.From] || !ids[e.To] {
					t.Errorf("edge %s → %s has an end that is not drawn", e.From, e.To)
				}
			}
			if counted != folded {
				t.Errorf("the claims count %d folded stances, Fit says %d", counted, folded)
			}
			for _, n := range g.Nodes {
				if n.Folded != 0 {
					t.Fatalf("Fit counted on %s of the graph it was given", n.ID)
				}
			}
		})
	}
}

// The largest thread the limits allow (200 claims × 100 stances: 25 s and 540 MB drawn whole)
// is drawn within the bound, the fold said on its claims; so is a graph at the bound with the
// longest texts a label and a tooltip show. Each drawing process's memory stays bounded,
// under what the admission gate's Drawing class is sized for (256 MiB).
func TestLargestDrawingIsBounded(t *testing.T) {
	atTheBound := thread(111, 8) // 1 + 111 + 888 nodes
	long := strings.Repeat("a long text that a label cuts short and a tooltip shows ", 10)
	for _, n := range atTheBound.Nodes {
		n.Statement, n.Text, n.By = long, long, strings.Repeat("x", 64)
	}
	for _, tc := range []struct {
		name string
		g    *Graph
		fold bool
	}{
		{"the largest thread", thread(200, 100), true},
		{"at the bound, long texts", atTheBound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, folded, fits := tc.g.Fit(DrawingBound)
			if !fits || (folded > 0) != tc.fold {
				t.Fatalf("fits %v, %d folded", fits, folded)
			}
			var dot bytes.Buffer
			if err := writeDOT(&dot, g, Drawing{Lang: "en", Link: func(n *Node) string { return "/threads/th_1#" + n.ID }}); err != nil {
				t.Fatal(err)
			}
			svg, peak, err := (&Renderer{}).draw(context.Background(), dot.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d nodes, %d edges: %d KiB of DOT, %d KiB of SVG, the drawing process's peak %d MiB",
				len(g.Nodes), len(g.Edges), dot.Len()>>10, len(svg)>>10, peak>>20)
			if peak == 0 || peak > maxDrawingPeak {
				t.Errorf("the drawing process held %d MiB at its peak; the bound is %d MiB", peak>>20, maxDrawingPeak>>20)
			}
			if said := strings.Contains(string(svg), "stances not drawn"); said != tc.fold {
				t.Errorf("the drawing says stances are folded: %v, want %v", said, tc.fold)
			}
		})
	}
}

// stopFirst is a Renderer whose first drawing process is stopped (SIGSTOP) as soon as it
// runs: it can then draw nothing until it is continued or killed, which makes "while the
// first drawing is still busy" certain. stopped receives that process.
func stopFirst(t *testing.T) (r *Renderer, stopped chan *os.Process) {
	stopped = make(chan *os.Process, 1)
	first := true
	return &Renderer{Started: func(p *os.Process) {
		if !first {
			return
		}
		first = false
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Errorf("stopping the drawing process: %v", err)
		}
		stopped <- p
	}}, stopped
}

// A small drawing is not queued behind a large one: it is drawn while the large one's
// process is provably busy (stopped), which then goes on and is drawn too. Found: one
// Graphviz behind one lock for the whole process; a 20-claim graph waited 120 s behind three
// large ones.
func TestSmallDrawingIsNotQueuedBehindALargeOne(t *testing.T) {
	r, stopped := stopFirst(t)
	large := make(chan error, 1)
	go func() {
		_, err := r.RenderSVG(context.Background(), thread(200, 3), Drawing{})
		large <- err
	}()
	p := <-stopped
	// Were the small drawing queued behind the stopped one, it would wait for ever: its
	// context ends it after a minute, so that the test fails instead of hanging.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	svg, err := r.RenderSVG(ctx, thread(2, 1), Drawing{})
	if err != nil || !bytes.Contains(svg, []byte(`id="cl_2"`)) {
		t.Fatalf("the small drawing beside a stopped large one: %v", err)
	}
	select {
	case err := <-large:
		t.Fatalf("the large drawing ended while its process was stopped: %v", err)
	default:
	}
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := <-large; err != nil {
		t.Fatalf("the large drawing, continued: %v", err)
	}
}

// A drawing whose context ends is abandoned: its process is killed (stopped here, so that
// only the kill can end it), and the call returns ErrAbandoned with the context's error.
func TestDrawingPastItsDeadlineIsAbandoned(t *testing.T) {
	r, stopped := stopFirst(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.RenderSVG(ctx, thread(20, 1), Drawing{})
		done <- err
	}()
	p := <-stopped
	cancel(context.DeadlineExceeded)
	err := <-done
	if !errors.Is(err, ErrAbandoned) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a drawing past its deadline: %v, want ErrAbandoned and the deadline", err)
	}
	if err := p.Signal(syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("the abandoned drawing's process is still there: %v", err)
	}
}
