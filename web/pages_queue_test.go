package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// ids are the values of attr on the elements selector finds, in page order.
func (p *page) ids(selector, attr string) []string {
	return p.find(selector).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr(attr, "") })
}

// claimProposals makes the three kinds of a claim's proposal, each by a model: supported
// (bob attests), verified (vera, a verifier without lock, seals) and refuted (bob refutes);
// and a claim only asserted, which proposes nothing.
func (f *forum) claimProposals(thread, ask string) (supported, verified, refuted, asserted string) {
	f.t.Helper()
	vera := f.token("ainotes:vera", false, "read,write,verify", nil)
	supported = f.assert(f.alice, thread, ask, "port 8080")
	f.attest(f.bob, supported)
	verified = f.assert(f.alice, thread, ask, "port 8081")
	f.attest(f.bob, verified)
	f.must(f.post("/v1/claims/"+verified+"/verify", vera, `{}`), http.StatusOK)
	refuted = f.assert(f.alice, thread, ask, "port 8082")
	f.must(f.post("/v1/claims/"+refuted+"/refute", f.bob, `{"evidence":`+proofLog+`,"body":"It listens on 8083."}`), http.StatusOK)
	asserted = f.assert(f.alice, thread, ask, "port 8084")
	return supported, verified, refuted, asserted
}

// claimConfirmed reads a claim's state and whether it is confirmed through the API.
func (f *forum) claimConfirmed(claim string) (string, bool) {
	f.t.Helper()
	r := f.must(f.get("/v1/claims/"+claim, f.reader), http.StatusOK)
	confirmed, _ := r.json["claim"].(map[string]any)["confirmed"].(bool)
	return r.at("claim", "state"), confirmed
}

// The queue holds the claims' proposals beside the threads' (defect 2): supported, verified
// and refuted by models and unconfirmed, oldest first, each with its confirm control and a
// box for Confirm selected; never a claim only asserted. Its count stands in the
// navigation. A claim's card on its thread page has the confirm control too.
func TestQueueHoldsClaimProposals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		supported, verified, refuted, asserted := f.claimProposals(thread, ask)
		for _, c := range []string{supported, verified, refuted} {
			if _, confirmed := f.claimConfirmed(c); confirmed {
				t.Fatalf("%s is confirmed: the test needs a model's proposal", c)
			}
		}

		p := b.get("/moderation").must(t, http.StatusOK)
		if got, want := p.ids(`.claim-proposals li[data-claim-id]`, "data-claim-id"), []string{supported, verified, refuted}; !slices.Equal(got, want) {
			t.Fatalf("the queue's claims' proposals are %v, want %v", got, want)
		}
		for _, c := range []string{supported, verified, refuted} {
			row := p.find(`li#proposal-` + c)
			if row.Find(`form[action="/claims/`+c+`/confirm"] [data-action="confirm"]`).Length() != 1 ||
				row.Find(`input[type="checkbox"][name="item"][value="`+c+`"][form="confirm-selected"]`).Length() != 1 {
				t.Errorf("%s's row lacks its confirm control or its box for Confirm selected", c)
			}
		}
		if !strings.Contains(p.text(`li#proposal-`+verified), "unverified") || !strings.Contains(p.text(`li#proposal-`+verified), "ainotes:vera") {
			t.Errorf("the verified claim's row does not say who proposed which state: %q", p.text(`li#proposal-`+verified))
		}
		if p.find(`.claim-proposals [data-claim-id="`+asserted+`"]`).Length() != 0 {
			t.Error("a claim only asserted is in the queue as a proposal")
		}
		threads := p.find(`li[data-thread-id]`).Length()
		if got := p.find(`nav [data-queue-count]`).AttrOr("data-queue-count", ""); got != strconv.Itoa(threads+3) {
			t.Errorf("the navigation counts %q waiting, want %d threads and 3 claims", got, threads)
		}
		if got := b.get("/?lang=de").text(`nav a[href="/moderation"]`); !strings.Contains(got, strconv.Itoa(threads+3)+" warten") {
			t.Errorf("the German navigation's count reads %q", got)
		}

		card := b.get("/threads/"+thread).must(t, http.StatusOK)
		if card.find(`article#`+supported+` [data-action="confirm"]`).Length() != 1 || card.find(`article#`+asserted+` [data-action="confirm"]`).Length() != 0 {
			t.Error("a claim's card offers confirm on a proposal and only there: it does not")
		}
		b.post("/claims/"+supported+"/confirm", url.Values{"view": {"thread"}}).redirectsTo(t, "/threads/"+thread+"#"+supported)
		if state, confirmed := f.claimConfirmed(supported); state != "supported" || !confirmed {
			t.Errorf("after the confirm on the thread page %s is %s, confirmed %t", supported, state, confirmed)
		}
		if got := b.get("/moderation").find(`nav [data-queue-count]`).AttrOr("data-queue-count", ""); got != strconv.Itoa(threads+2) {
			t.Errorf("after one confirm the navigation counts %q", got)
		}
	})
}

// Each confirm in the queue leaves a result line, "Confirmed cl_N as refuted — Undo" (defect
// 9): with htmx in the row, without JavaScript at the queue's head after the redirect, once;
// its Undo re-marks back, a CSRF-checked post; a refused confirm is a result line too.
func TestQueueConfirmResultAndUndo(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		supported, verified, refuted, _ := f.claimProposals(thread, ask)
		b.get("/moderation")

		// With htmx: the row, and out of band the result line with its Undo at the queue's
		// head, where the live refresh of the lists leaves it.
		frag := b.post("/claims/"+supported+"/confirm", url.Values{"view": {"proposal"}}, htmx...).must(t, http.StatusOK)
		if frag.find(`li#proposal-`+supported+`[data-claim-state="supported"] [data-done]`).Length() != 1 {
			t.Errorf("the htmx confirm does not swap the row, confirmed:\n%s", frag.body)
		}
		line := frag.find(`#queue-results[hx-swap-oob="true"] [data-result="` + supported + `"]`)
		if !strings.Contains(line.Text(), "Confirmed "+supported+" as supported") ||
			line.Find(`form[action="/claims/`+supported+`/mark"] input[name="state"][value="unverified"]`).Length() != 1 ||
			line.Find(`[data-action="undo"]`).Length() != 1 || line.Find(`input[name="csrf"]`).Length() != 1 {
			t.Errorf("the htmx confirm's row has no result line with its Undo:\n%s", frag.body)
		}

		// The Undo with htmx leaves a line saying what it did in place of the result line.
		undone := b.post("/claims/"+supported+"/mark", url.Values{"view": {"proposal"}, "state": {"unverified"}, "undo": {"yes"}}, htmx...).must(t, http.StatusOK)
		if got := undone.text(`li [data-undone="` + supported + `"]`); got != "Undone: "+supported+" is unverified again" {
			t.Errorf("the htmx Undo says %q", got)
		}
		if state, confirmed := f.claimConfirmed(supported); state != "unverified" || !confirmed {
			t.Errorf("after the htmx Undo %s is %s, confirmed %t", supported, state, confirmed)
		}
		b.post("/claims/"+supported+"/confirm", url.Values{"view": {"proposal"}}).must(t, http.StatusConflict) // a human's mark now: nothing to confirm

		// Without JavaScript: 303 to the queue, which shows the result line once.
		b.post("/claims/"+refuted+"/confirm", url.Values{"view": {"proposal"}}).redirectsTo(t, "/moderation")
		p := b.get("/moderation").must(t, http.StatusOK)
		line = p.find(`#queue-results [data-result="` + refuted + `"]`)
		if !strings.Contains(line.Text(), "Confirmed "+refuted+" as refuted") || line.Find(`input[name="state"][value="unverified"]`).Length() != 1 {
			t.Errorf("no result line after the plain confirm: %q", p.text("#queue-results"))
		}
		if p.find(`.claim-proposals [data-claim-id="`+refuted+`"]`).Length() != 0 {
			t.Error("the confirmed claim is still among the proposals")
		}
		if b.get("/moderation").find(`#queue-results [data-result]`).Length() != 0 {
			t.Error("the result line shows a second time")
		}

		// The Undo is a mark: CSRF-checked, then the claim back in its state before.
		forged := url.Values{"view": {"proposal"}, "state": {"unverified"}, "csrf": {"forged"}}
		b.post("/claims/"+refuted+"/mark", forged).must(t, http.StatusForbidden)
		if state, _ := f.claimConfirmed(refuted); state != "refuted" {
			t.Fatalf("a forged Undo changed the claim to %s", state)
		}
		b.post("/claims/"+refuted+"/mark", url.Values{"view": {"proposal"}, "state": {"unverified"}}).redirectsTo(t, "/moderation#proposal-"+refuted)
		if state, confirmed := f.claimConfirmed(refuted); state != "unverified" || !confirmed {
			t.Errorf("after the Undo %s is %s, confirmed %t; want unverified, a human's mark", refuted, state, confirmed)
		}

		// In German; and a thread's proposal, whose Undo goes back to its last confirmed state.
		proposal := f.proposed("Undo in the queue?")
		b.post("/threads/"+proposal+"/confirm", url.Values{"view": {"queue"}}).redirectsTo(t, "/moderation")
		de := b.get("/moderation?lang=de").must(t, http.StatusOK)
		line = de.find(`#queue-results [data-result="` + proposal + `"]`)
		if !strings.Contains(line.Text(), proposal+" als beantwortet bestätigt") || !strings.Contains(line.Text(), "Rückgängig") ||
			line.Find(`form[action="/threads/`+proposal+`/mark"] input[name="state"][value="open"]`).Length() != 1 {
			t.Errorf("the German result line of a thread's confirm reads %q", line.Text())
		}
		b.post("/threads/"+proposal+"/mark", url.Values{"view": {"queue"}, "state": {"open"}}).redirectsTo(t, "/moderation")
		if state, confirmed := f.state(proposal); state != "open" || !confirmed {
			t.Errorf("after the thread's Undo it is %s, confirmed %t", state, confirmed)
		}

		// A refused confirm (confirmed already) is a result line with its reason.
		b.get("/moderation")
		b.post("/claims/"+supported+"/mark", url.Values{"state": {"supported"}}).must(t, http.StatusSeeOther)
		refused := b.post("/claims/"+supported+"/confirm", url.Values{"view": {"proposal"}}).must(t, http.StatusConflict)
		if refused.find(`#queue-results [data-result="`+supported+`"][data-refused] [data-reason="invalid_transition"]`).Length() != 1 {
			t.Errorf("the refused confirm has no result line:\n%s", refused.text("#queue-results"))
		}
		frag = b.post("/claims/"+supported+"/confirm", url.Values{"view": {"proposal"}}, htmx...).must(t, http.StatusConflict)
		if frag.header.Get("HX-Retarget") != "#queue-results" || frag.find(`[data-reason="invalid_transition"]`).Length() != 1 {
			t.Errorf("the refused htmx confirm is not swapped into the result lines:\n%s", frag.body)
		}
		if state, _ := f.claimConfirmed(verified); state != "verified" {
			t.Errorf("%s changed to %s", verified, state)
		}
	})
}

// Confirm selected runs each selected item as its own operation: what can be confirmed is,
// what is refused is listed with its reason and stops nothing; with htmx it swaps the queue
// and the result lines; nothing selected says so.
func TestQueueConfirmSelected(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		supported, verified, refuted, asserted := f.claimProposals(thread, ask)
		first, second := f.proposed("First selected?"), f.proposed("Second selected?")
		b.get("/moderation")

		items := url.Values{"item": {first, supported, asserted, "th_999999", "nonsense", verified, first}}
		b.post("/moderation/confirm", items).redirectsTo(t, "/moderation")
		p := b.get("/moderation").must(t, http.StatusOK)
		if got, want := p.ids(`#queue-results [data-result]`, "data-result"), []string{first, supported, asserted, "th_999999", "nonsense", verified}; !slices.Equal(got, want) {
			t.Errorf("the result lines are for %v, want %v (each once)", got, want)
		}
		for subject, reason := range map[string]string{asserted: "invalid_transition", "th_999999": "not_found", "nonsense": "invalid_body"} {
			if p.find(`#queue-results [data-result="`+subject+`"][data-refused] [data-reason="`+reason+`"]`).Length() != 1 {
				t.Errorf("the refusal of %s is not listed with reason %s", subject, reason)
			}
		}
		for _, c := range []string{supported, verified} {
			if _, confirmed := f.claimConfirmed(c); !confirmed {
				t.Errorf("%s was selected and is not confirmed", c)
			}
		}
		if state, confirmed := f.state(first); state != "answered" || !confirmed {
			t.Errorf("%s is %s, confirmed %t", first, state, confirmed)
		}
		if _, confirmed := f.state(second); confirmed {
			t.Error("a thread that was not selected was confirmed")
		}

		frag := b.post("/moderation/confirm", url.Values{"item": {second, refuted}}, htmx...).must(t, http.StatusOK)
		if frag.find(`#queue-results [data-result="`+second+`"] [data-action="undo"]`).Length() != 1 ||
			frag.find(`#queue-results [data-result="`+refuted+`"] [data-action="undo"]`).Length() != 1 ||
			frag.find(`#queue-live [data-thread-id="`+second+`"], #queue-live .claim-proposals [data-claim-id="`+refuted+`"]`).Length() != 0 {
			t.Errorf("the htmx Confirm selected does not answer the queue without them and their result lines:\n%s", frag.text("#queue-results"))
		}
		if _, confirmed := f.state(second); !confirmed {
			t.Error("the htmx Confirm selected did not confirm")
		}

		b.post("/moderation/confirm", url.Values{}).redirectsTo(t, "/moderation")
		if got := b.get("/moderation").text("#queue-results"); !strings.Contains(got, "Nothing was selected") {
			t.Errorf("Confirm selected with nothing selected says %q", got)
		}
	})
}

// A superseded claim's re-mark starts on an empty, required choice, never on a state a
// single click would set (defect 1: it showed "refuted" preselected and one click refuted
// the claim); a re-mark gives it another state and rewrites no history: the newer claim
// still supersedes it, and it still says by whom it was superseded.
func TestSupersededClaimReMark(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		old := f.assert(f.alice, thread, ask, "port 8080")
		newer := f.assert(f.alice, thread, ask, "port 9090", `"supersedes":["`+old+`"]`)

		p := b.get("/threads/"+thread).must(t, http.StatusOK)
		sel := p.find(`#mark-` + old + ` select[name="state"]`)
		if _, required := sel.Attr("required"); !required || sel.Find(`option[selected]`).AttrOr("value", "none") != "" ||
			sel.Find(`option`).First().AttrOr("value", "none") != "" || sel.Find(`option[selected]`).Length() != 1 {
			t.Errorf("the superseded claim's re-mark does not start on an empty, required choice: %s", goquery.NewDocumentFromNode(sel.Nodes[0]).Text())
		}
		if hint := p.text(`#mark-` + old + `-hint`); !strings.Contains(hint, "Superseded by "+newer) {
			t.Errorf("the superseded claim's re-mark does not say what stays: %q", hint)
		}
		if got := p.find(`#mark-`+newer+` select[name="state"] option[selected]`).AttrOr("value", ""); got != "unverified" {
			t.Errorf("a standing claim's re-mark starts on %q, want its own state", got)
		}

		// The empty choice sent anyway (no browser check) is refused and changes nothing.
		b.post("/claims/"+old+"/mark", url.Values{"state": {""}}).must(t, http.StatusBadRequest)
		if state := f.claimState(old); state != "superseded" {
			t.Fatalf("an empty re-mark made the claim %s", state)
		}

		b.post("/claims/"+old+"/mark", url.Values{"state": {"refuted"}}).redirectsTo(t, "/threads/"+thread+"#"+old)
		p = b.get("/threads/"+thread).must(t, http.StatusOK)
		if p.find(`article#`+old).AttrOr("data-claim-state", "") != "refuted" {
			t.Errorf("the re-mark did not refute the claim")
		}
		if !strings.Contains(p.text(`article#`+newer), "Supersedes "+old) || !strings.Contains(p.text(`article#`+old), "Superseded by "+newer) {
			t.Errorf("the re-mark rewrote the supersession: %q / %q", p.text(`article#`+newer), p.text(`article#`+old))
		}
		read := f.must(f.get("/v1/claims/"+newer, f.reader), http.StatusOK)
		if !strings.Contains(string(read.body), `"supersedes":["`+old+`"]`) {
			t.Errorf("the newer claim no longer supersedes the older over the API: %s", read.body)
		}
	})
}
