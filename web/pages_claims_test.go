package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// Evidence items of every rendering: a link, a hash and a commit to copy, free text.
const (
	aHash         = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	claimEvidence = `[{"kind":"url","ref":"https://example.org/port?a=1&b=2","note":"the docs"},` +
		`{"kind":"hash","ref":"` + aHash + `"},{"kind":"commit","ref":"parley@abcdef1"},{"kind":"log","ref":"listening on 8080"}]`
	proofLog = `[{"kind":"log","ref":"reproduced on main"}]`
)

// reopenAndRead reopens a closed thread as the human, then reads it (for the CSRF token).
func (b *browser) reopenAndRead(t *testing.T, thread string) {
	t.Helper()
	b.post("/threads/"+thread+"/messages", url.Values{"kind": {"reopen"}, "body": {"Again."}}).must(t, http.StatusSeeOther)
	b.get("/threads/" + thread)
}

// claimSite is a forum with limits (zero: the defaults) in which ada has signed in, and a
// question of alice's that claims are anchored in.
func claimSite(t *testing.T, db *storage.DB, limits protocol.Limits) (f *forum, b *browser, thread, ask string) {
	t.Helper()
	f = newSite(t, db, web.Options{Limits: limits})
	f.account("ada", false)
	b = f.signedIn(t, "ada")
	thread, ask = f.ask(f.alice, "Which port?")
	return f, b, thread, ask
}

// mustTime reads an RFC 3339 time.
func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// assert makes a claim as token anchored in message and returns its id.
func (f *forum) assert(token, thread, anchor, statement string, more ...string) string {
	f.t.Helper()
	body := `{"thread":"` + thread + `","parent":"` + anchor + `","statement":` + quote(statement) + `,"evidence":` + claimEvidence
	for _, m := range more {
		body += "," + m
	}
	return f.must(f.post("/v1/claims", token, body+"}"), http.StatusCreated).at("claim", "id")
}

// attest lets token attest claim with proof: unverified becomes supported.
func (f *forum) attest(token, claim string) {
	f.t.Helper()
	f.must(f.post("/v1/claims/"+claim+"/attest", token, `{"evidence":`+proofLog+`,"note":"checked twice"}`), http.StatusOK)
}

// claimState reads a claim's state through the API.
func (f *forum) claimState(claim string) string {
	f.t.Helper()
	return f.must(f.get("/v1/claims/"+claim, f.reader), http.StatusOK).at("claim", "state")
}

// The claim cards stand under their anchor message with the stable hooks, every evidence
// item (a link with nofollow noopener, hashes and commits as code), the attestations and
// refutations with their proof, the verifications against the quorum, the supersession and
// the grounded label; the timeline names the claim events; in German too.
func TestClaimCards(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.VerifyQuorum = 2
		f, b, thread, ask := claimSite(t, db, limits)
		supported := f.assert(f.alice, thread, ask, "parley serve listens on 8080")
		f.attest(f.bob, supported)
		refuted := f.assert(f.bob, thread, ask, "It listens on <b>9090</b>")
		f.must(f.post("/v1/claims/"+refuted+"/refute", f.alice, `{"evidence":`+proofLog+`,"body":"It printed 8080."}`), http.StatusOK)
		older := f.assert(f.alice, thread, ask, "The port is fixed")
		newer := f.assert(f.alice, thread, ask, "The port is 8080 unless --addr says otherwise", `"supersedes":["`+older+`"]`)

		// A claim valid for a moment, attested, then past its valid_until: expired, apart.
		until := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		expiring := f.assert(f.alice, thread, ask, "The default port holds this second", `"valid_until":"`+until+`"`)
		f.attest(f.bob, expiring)
		time.Sleep(time.Until(mustTime(t, until)))

		p := b.get("/threads/"+thread).must(t, http.StatusOK)
		e := p.find(`[data-claim-id="` + expiring + `"]`)
		if e.Find(`[data-certainty="expired"]`).Length() != 1 || !strings.Contains(e.Find(".expired-mark").Text(), "expired since") || e.Find(`[data-action="verify"]`).Length() != 0 {
			t.Errorf("the expired claim is not marked expired, or offers verify: %s", strings.Join(strings.Fields(e.Text()), " "))
		}
		card := func(claim, state string) string {
			return `[data-message-id="` + ask + `"] [data-claim-id="` + claim + `"][data-claim-state="` + state + `"]`
		}
		for claim, state := range map[string]string{supported: "supported", refuted: "refuted", older: "superseded", newer: "unverified", expiring: "supported"} {
			if p.find(card(claim, state)).Length() != 1 {
				t.Errorf("no card of %s in state %s under its anchor %s", claim, state, ask)
			}
		}
		c := p.find(`[data-claim-id="` + supported + `"]`)
		if a := c.Find(`a[href="https://example.org/port?a=1&b=2"]`); a.AttrOr("rel", "") != "nofollow noopener" {
			t.Errorf("the URL evidence is not a link with rel nofollow noopener: %q", a.AttrOr("rel", "(none)"))
		}
		codes := c.Find(`[data-evidence-kind] code`).Text()
		if !strings.Contains(codes, aHash) || !strings.Contains(codes, "parley@abcdef1") {
			t.Errorf("the hash and the commit are not code to copy: %q", codes)
		}
		text := strings.Join(strings.Fields(c.Text()), " ")
		for _, want := range []string{"parley serve listens on 8080", "ainotes:alice", "model", "the docs", "1 attestation", "ainotes:bob", "checked twice", "reproduced on main", "Verifications: 0 of 2 verified", "grounded: IN"} {
			if !strings.Contains(text, want) {
				t.Errorf("the card of %s lacks %q: %s", supported, want, text)
			}
		}
		if c.Find(`[data-action="verify"]`).Length() != 1 || c.Find(`[data-action="mark"]`).Length() != 1 {
			t.Error("a supported claim's card offers no verify or no mark control")
		}
		if n := p.find(`[data-claim-id="` + refuted + `"] [data-action="verify"]`).Length(); n != 0 {
			t.Error("a refuted claim offers a verify control")
		}
		r := p.find(`[data-claim-id="` + refuted + `"]`)
		if got := r.Find(".statement").Text(); got != "It listens on <b>9090</b>" || r.Find("b").Length() != 0 {
			t.Errorf("the statement is not text: %q", got)
		}
		if !strings.Contains(r.Text(), "It printed 8080.") || r.Find(`[data-grounded="out"]`).Length() != 1 {
			t.Errorf("the refuted claim lacks its refutation's body or its OUT label: %s", r.Text())
		}
		if got := p.text(`[data-claim-id="` + older + `"] .superseded-mark`); !strings.Contains(got, "Superseded by "+newer) {
			t.Errorf("the superseded claim reads %q", got)
		}
		if p.find(`[data-claim-id="`+older+`"] [data-certainty="superseded"]`).Length() != 1 {
			t.Error("the superseded claim's badge is not apart")
		}
		timeline := p.text("#timeline")
		for _, want := range []string{"Asserted " + supported, "Attested " + supported, "unverified → supported", "Refuted " + refuted} {
			if !strings.Contains(timeline, want) {
				t.Errorf("the timeline lacks %q: %s", want, timeline)
			}
		}
		if strings.Contains(p.body, "claim.") || strings.Contains(timeline, "state.") || strings.Contains(timeline, "act.") {
			t.Error("the page shows a message id instead of its text")
		}
		if p.find(`a[href="/threads/`+thread+`/graph"]`).Length() != 1 {
			t.Error("the thread page does not link its claim graph")
		}

		de := b.get("/threads/"+thread+"?lang=de").must(t, http.StatusOK)
		got := de.text(`[data-claim-id="` + supported + `"]`)
		for _, want := range []string{"Behauptung", "gestützt", "Prüfsiegel: 0 von 2 geprüft", "begründet: IN", "1 Bezeugung"} {
			if !strings.Contains(got, want) {
				t.Errorf("the German card lacks %q: %s", want, got)
			}
		}
	})
}

// A human verifies and re-marks a claim: without JavaScript a form post and 303 back to the
// card; with htmx the card alone (and the timeline out of band), in place. Refusals show
// beside the control, in the reader's language, and change nothing; a post without the CSRF
// token is refused; a visitor is sent to sign in.
func TestClaimVerifyAndMark(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		plain := f.assert(f.alice, thread, ask, "8080")
		live := f.assert(f.alice, thread, ask, "8081")
		f.attest(f.bob, plain)
		f.attest(f.bob, live)

		b.get("/threads/" + thread)
		if res := b.post("/claims/"+plain+"/verify", url.Values{"csrf": {"forged"}}).must(t, http.StatusForbidden); res.find("main").Length() != 1 {
			t.Error("a verify without the session's token is not refused with a page")
		}
		if f.claimState(plain) != "supported" {
			t.Fatal("a verify without the CSRF token changed the claim")
		}
		b.post("/claims/"+plain+"/verify", url.Values{"view": {"thread"}}).redirectsTo(t, "/threads/"+thread+"#"+plain)
		if got := f.claimState(plain); got != "verified" {
			t.Fatalf("after the human's verify the claim is %s", got)
		}
		if read := f.must(f.get("/v1/claims/"+plain, f.reader), http.StatusOK); !strings.Contains(string(read.body), `"by":{"identity":"human:ada"`) {
			t.Errorf("the verification is not by human:ada: %s", read.body)
		}

		res := b.post("/claims/"+live+"/verify", url.Values{"view": {"thread"}}, htmx...).must(t, http.StatusOK)
		if res.find("html > body > main").Length() != 0 {
			t.Error("the htmx answer is a whole page")
		}
		if res.find(`article#`+live+`[data-claim-id="`+live+`"][data-claim-state="verified"]`).Length() != 1 {
			t.Errorf("the htmx answer has no verified card:\n%s", res.body)
		}
		if res.find(`#timeline[hx-swap-oob="true"]`).Length() != 1 {
			t.Errorf("the htmx answer lacks the timeline out of band:\n%s", res.body)
		}
		res = b.post("/claims/"+live+"/mark", url.Values{"view": {"thread"}, "state": {"refuted"}}, htmx...).must(t, http.StatusOK)
		if res.find(`[data-claim-id="`+live+`"][data-claim-state="refuted"] [data-confirmed="true"]`).Length() != 1 {
			t.Errorf("mark with htmx: no refuted, confirmed card:\n%s", res.body)
		}
		b.post("/claims/"+live+"/mark", url.Values{"state": {"supported"}}).redirectsTo(t, "/threads/"+thread+"#"+live)
		if got := f.claimState(live); got != "supported" {
			t.Errorf("after the mark without JavaScript the claim is %s", got)
		}

		// A second verify by the same human: already_attested beside the verify control, as the
		// page again and as a fragment for htmx; a verify of an unverified claim:
		// invalid_transition. The claims stay.
		p := b.post("/claims/"+plain+"/verify", url.Values{"view": {"thread"}}).must(t, http.StatusConflict)
		if p.find(`#verify-`+plain+`-error [data-reason="already_attested"]`).Length() != 1 {
			t.Errorf("a second verify: no already_attested beside its control:\n%s", p.body)
		}
		unverified := f.assert(f.bob, thread, ask, "nobody attested this")
		frag := b.post("/claims/"+unverified+"/verify", url.Values{"view": {"thread"}}, htmx...).must(t, http.StatusConflict)
		if frag.header.Get("HX-Retarget") != "#verify-"+unverified+"-error" || frag.find(`[data-reason="invalid_transition"]`).Length() != 1 {
			t.Errorf("htmx refusal: HX-Retarget %q:\n%s", frag.header.Get("HX-Retarget"), frag.body)
		}
		if got := f.claimState(unverified); got != "unverified" {
			t.Errorf("a refused verify changed the claim to %s", got)
		}
		// Mark with a state no human gives: invalid_body, in German.
		p = b.post("/claims/"+plain+"/mark?lang=de", url.Values{"state": {"superseded"}}).must(t, http.StatusBadRequest)
		if got := p.text(`#mark-` + plain + `-error [data-reason="invalid_body"]`); !strings.Contains(got, "ungültig") {
			t.Errorf("the refused mark reads %q, want the German reason", got)
		}
		if got := f.claimState(plain); got != "verified" {
			t.Errorf("a refused mark changed the claim to %s", got)
		}
		// A closed, confirmed thread's claims accept nothing.
		b.get("/threads/" + thread + "?lang=en")
		b.post("/threads/"+thread+"/messages", url.Values{"kind": {"close"}, "body": {"Done."}}).must(t, http.StatusSeeOther)
		p = b.post("/claims/"+live+"/mark", url.Values{"state": {"refuted"}}).must(t, http.StatusConflict)
		if p.find(`#mark-`+live+`-error [data-reason="thread_closed"]`).Length() != 1 {
			t.Errorf("a mark in a closed thread: no thread_closed beside its control:\n%s", p.body)
		}
		// The human's own claim, made with a personal token: verifying it is self_attestation.
		b.reopenAndRead(t, thread)
		own := f.assert(f.token("human:ada", true, "read,write,verify", nil), thread, ask, "The port is printed at start")
		f.attest(f.bob, own)
		p = b.post("/claims/"+own+"/verify", url.Values{"view": {"thread"}}).must(t, http.StatusConflict)
		if p.find(`#verify-`+own+`-error [data-reason="self_attestation"]`).Length() != 1 {
			t.Errorf("verifying one's own claim: no self_attestation beside the control:\n%s", p.body)
		}
		b.post("/claims/cl_999/verify", nil).must(t, http.StatusNotFound)
		b.post("/claims/x1/verify", nil).must(t, http.StatusNotFound)

		visitor := f.browser(t)
		visitor.get("/login")
		if res := visitor.post("/claims/"+live+"/verify", nil); res.status != http.StatusSeeOther || !strings.HasPrefix(res.header.Get("Location"), "/login") {
			t.Errorf("a visitor's verify: %d to %q, want 303 to the login", res.status, res.header.Get("Location"))
		}
	})
}

// The queue lists the claims awaiting a verifier (supported, not sealed, in an open thread),
// the oldest first, each with its verify control; a verify from the queue swaps the row with
// htmx, or redirects back to the queue; a sealed claim leaves it.
func TestClaimQueue(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		first := f.assert(f.alice, thread, ask, "8080")
		second := f.assert(f.alice, thread, ask, "8081")
		waiting := f.assert(f.alice, thread, ask, "nobody attested this")
		f.attest(f.bob, first)
		f.attest(f.bob, second)

		p := b.get("/moderation").must(t, http.StatusOK)
		rows := p.find(`.claim-queue li[data-claim-id]`)
		if rows.Length() != 2 || rows.First().AttrOr("data-claim-id", "") != first || rows.Last().AttrOr("data-claim-id", "") != second {
			t.Fatalf("the queue lists the claims %v, want %s then %s", p.find(`.claim-queue li[data-claim-id]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-claim-id", "") }), first, second)
		}
		if p.find(`[data-claim-id="`+waiting+`"]`).Length() != 0 {
			t.Error("an unverified claim waits for a verifier in the queue")
		}
		if p.find(`.claim-queue li[data-claim-id="`+first+`"] [data-action="verify"]`).Length() != 1 {
			t.Error("a queued claim has no verify control")
		}
		res := b.post("/claims/"+first+"/verify", url.Values{"view": {"queue"}}, htmx...).must(t, http.StatusOK)
		if res.find(`li#queue-`+first+`[data-claim-state="verified"] [data-done]`).Length() != 1 {
			t.Errorf("the htmx verify from the queue: no verified row:\n%s", res.body)
		}
		b.post("/claims/"+second+"/verify", url.Values{"view": {"queue"}}).redirectsTo(t, "/moderation#queue-"+second)
		p = b.get("/moderation").must(t, http.StatusOK)
		if n := p.find(`li[data-claim-id]`).Length(); n != 0 {
			t.Errorf("%d sealed claims still wait in the queue", n)
		}
		b.get("/moderation?claims=bogus").must(t, http.StatusNotFound)
	})
}
