//go:build unix

package web_test

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// A drawing that runs past the request's deadline is abandoned: its process is killed, the
// page answers 503 with the error view and Retry-After, and the drawing slot is given back.
// Twice — two slots held for ever would be every drawing slot and the reader's whole share —
// and the next drawing is drawn. The drawing processes are stopped (SIGSTOP), so that only
// the deadline can end them. Found: a drawing ignored the deadline and held one lock for the
// whole process.
func TestGraphDrawingPastItsDeadline(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		var mu sync.Mutex
		var started []*os.Process
		stop := true
		renderer := &graph.Renderer{Started: func(p *os.Process) {
			mu.Lock()
			defer mu.Unlock()
			started = append(started, p)
			if stop {
				if err := p.Signal(syscall.SIGSTOP); err != nil {
					t.Errorf("stopping the drawing process: %v", err)
				}
			}
		}}
		// The default deadline: a drawing of one claim must fit it on a loaded machine, where
		// starting a drawing process built with the race detector takes seconds.
		f := newSite(t, db, web.Options{Renderer: renderer, RequestDeadline: 5 * time.Second})
		f.account("ada", false)
		b := f.signedIn(t, "ada")
		thread, ask := f.ask(f.alice, "Which port?")
		claim := f.assert(f.alice, thread, ask, "parley serve listens on 8080")

		for range 2 {
			p := b.get("/threads/"+thread+"/graph?lang=en").must(t, http.StatusServiceUnavailable)
			if p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "took longer than a page may take") {
				t.Errorf("a drawing past its deadline: Retry-After %q, page:\n%s", p.header.Get("Retry-After"), p.text("main"))
			}
		}
		mu.Lock()
		if len(started) != 2 {
			t.Fatalf("%d drawing processes started, want 2", len(started))
		}
		for _, p := range started {
			if err := p.Signal(syscall.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
				t.Errorf("an abandoned drawing's process is still there: %v", err)
			}
		}
		stop = false
		mu.Unlock()
		if p := b.get("/threads/"+thread+"/graph").must(t, http.StatusOK); p.find("figure svg g#"+claim).Length() != 1 {
			t.Errorf("after two abandoned drawings the next one is not drawn:\n%s", p.text("figure"))
		}
	})
}
