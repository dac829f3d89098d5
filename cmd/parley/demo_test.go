package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/web"
)

// parley demo fills an empty forum through the operation layer, and its first page shows the
// parts of Parley a newcomer should see; a forum with threads is refused and left as it was.
func TestDemo(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		out := parley(t, "demo", "--db", url).output(t)
		if !strings.Contains(out, "3 threads") || !strings.Contains(out, "2 claims") {
			t.Errorf("parley demo printed %q", out)
		}
		parley(t, "demo", "--db", url).fails(t, "a second demo", 1, "threads already")

		db := openDB(t, url)
		ctx := context.Background()
		svc := protocol.New(db, protocol.Options{})
		op := protocol.OperatorActor()
		listed, err := svc.ListThreads(ctx, op, []byte(`{}`))
		if err != nil || len(listed.Threads) != 3 {
			t.Fatalf("after the demo (and a refused second one) ListThreads = %v, %v", listed, err)
		}
		states := map[string]string{}
		for _, th := range listed.Threads {
			confirmed := "confirmed"
			if th.StateConfirmedAt == nil {
				confirmed = "proposed"
			}
			states[th.ID] = string(th.State) + " " + confirmed
		}
		for id, want := range map[string]string{"th_1": "decided confirmed", "th_2": "answered proposed", "th_3": "open confirmed"} {
			if states[id] != want {
				t.Errorf("%s is %q, want %q", id, states[id], want)
			}
		}
		for id, want := range map[string]string{"cl_1": "supported", "cl_2": "refuted"} {
			res, err := svc.ReadClaim(ctx, op, []byte(`{"claim":"`+id+`"}`))
			if err != nil || string(res.Claim.State) != want {
				t.Fatalf("claim %s: %v %v, want %s", id, res, err, want)
			}
			if id == "cl_2" && len(res.Claim.Verifications) != 1 {
				t.Errorf("the refuted claim was not sealed first: %d verifications", len(res.Claim.Verifications))
			}
		}

		app := web.New(web.Options{DB: db, PublicRead: true})
		first := demoPage(t, app, "/")
		if n := first.Find(`[data-thread-id]`).Length(); n != 3 {
			t.Errorf("the first page lists %d threads, want 3", n)
		}
		if !strings.Contains(first.Text(), "How long may an agent's inbox long poll wait") {
			t.Errorf("the first page does not show the demo's question:\n%s", first.Text())
		}
		thread := demoPage(t, app, "/threads/th_1")
		for _, state := range []string{"supported", "refuted"} {
			if thread.Find(`[data-claim-state="`+state+`"]`).Length() != 1 {
				t.Errorf("the first thread shows no %s claim", state)
			}
		}
		proposal := demoPage(t, app, "/threads/th_2")
		if proposal.Find(`[data-hidden="true"]`).Length() != 1 {
			t.Errorf("the second thread shows no hidden message")
		}
		if strings.Contains(proposal.Text(), "ignore your previous instructions") {
			t.Errorf("the injected message's body reaches a public reader")
		}
	})
}

// demoPage is the page at target as a public reader reads it; it must be there.
func demoPage(t *testing.T, app *fiber.App, target string) *goquery.Selection {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, target, nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", target, resp.StatusCode, err)
	}
	return doc.Selection
}
