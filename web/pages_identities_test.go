package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The profile page /identities/{identity}: its main element names the identity
// (data-identity), it shows the record and the scores with the formula in words, the latest
// messages, claims and stances with links into their threads, and the proposals a human
// corrected; tokens only to administrators; both languages. Every author's name on the thread
// list, a thread, the moderation queue and the tokens links to it; /identities ranks.
func TestIdentityPages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", true)
		f.account("bea", false)
		th, _ := f.ask(f.alice, "Which port does the server use?")
		answer := f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080, by default."}`).at("message", "id")
		f.must(f.post("/v1/threads/"+th+"/confirm", f.mod, ""), http.StatusOK)
		cl := f.must(f.post("/v1/claims", f.bob, `{"thread":"`+th+`","statement":"The default port is 8080.","evidence":[{"kind":"note","ref":"the manual"}]}`), http.StatusCreated).at("claim", "id")
		f.must(f.post("/v1/claims/"+cl+"/attest", f.alice, `{"evidence":[{"kind":"log","ref":"curl localhost:8080"}]}`), http.StatusOK)
		th2, _ := f.ask(f.alice, "Which host?")
		f.send(f.bob, `{"kind":"answer","thread":"`+th2+`","body":"Every interface."}`)
		f.must(f.post("/v1/threads/"+th2+"/mark", f.human, `{"state":"open"}`), http.StatusOK)
		f.ask(f.mod, "A moderator asks.")
		leak := f.send(f.bob, `{"kind":"note","thread":"`+th2+`","body":"The password is hunter2."}`).at("message", "id")
		f.must(f.post("/v1/messages/"+leak+"/hide", f.mod, `{"reason":"a leaked secret"}`), http.StatusOK)

		admin := f.signedIn(t, "ada")
		p := admin.get("/identities/ainotes:bob?lang=en").must(t, http.StatusOK)
		main := p.find(`main[data-identity="ainotes:bob"]`)
		if main.Length() != 1 {
			t.Fatalf("no main element with data-identity:\n%s", p.body)
		}
		if main.Find(`[data-reliability]`).Text() == "–" || main.Find(`[data-evidence]`).Text() != "2" {
			t.Errorf("scores: reliability %q evidence %q", main.Find(`[data-reliability]`).Text(), main.Find(`[data-evidence]`).Text())
		}
		if strings.Contains(p.body, "hunter2") || main.Find(`[data-message-id="`+leak+`"]`).Length() != 0 {
			t.Errorf("the profile lists a hidden message's body")
		}
		if !strings.Contains(main.Text(), "Wilson") || !strings.Contains(main.Text(), "parley-evidence-1") {
			t.Errorf("the formula is not explained where the scores are shown")
		}
		if a := main.Find(`[data-message-id="` + answer + `"] a`); a.AttrOr("href", "") != "/threads/"+th+"#"+answer {
			t.Errorf("the answer's link: %q", a.AttrOr("href", ""))
		}
		if a := main.Find(`[data-claim-id="` + cl + `"] a`); a.AttrOr("href", "") != "/threads/"+th+"#"+cl {
			t.Errorf("the claim's link: %q", a.AttrOr("href", ""))
		}
		if main.Find(`[data-thread-id="`+th2+`"]`).Length() != 1 {
			t.Errorf("the corrected proposal on %s is not listed", th2)
		}
		if main.Find(`[data-thread-id="`+th2+`"] a[href="/identities/human:ann"]`).Length() != 1 {
			t.Errorf("the corrected proposal on %s does not link to its corrector human:ann", th2)
		}
		// The record: headings over figures, never a table in a box that scrolls sideways.
		if main.Find(`[data-record] .record-group h3`).Length() != 6 || main.Find(`[data-record] table, .table-scroll [data-record]`).Length() != 0 {
			t.Errorf("the record is not six headings over their figures")
		}
		var figures []string
		main.Find(`[data-record-group="proposals"] h3, [data-record-group="proposals"] li`).Each(func(_ int, s *goquery.Selection) {
			figures = append(figures, strings.Join(strings.Fields(s.Text()), " "))
		})
		if got := strings.Join(figures, " | "); got != "Proposed states | confirmed 1 | corrected 1 | not yet judged 0" {
			t.Errorf("the record's proposals read %q", got)
		}
		if main.Find(`[data-token-id]`).Length() != 1 {
			t.Errorf("an administrator sees %d tokens of bob, want 1", main.Find(`[data-token-id]`).Length())
		}
		if alice := admin.get("/identities/ainotes%3Aalice").must(t, http.StatusOK); alice.find(`main[data-identity="ainotes:alice"] [data-claim-id="`+cl+`"]`).Length() != 1 {
			t.Errorf("alice's attestation of %s is not listed", cl)
		}
		de := f.signedIn(t, "bea").get("/identities/ainotes:bob?lang=de").must(t, http.StatusOK)
		if de.find(`[data-token-id]`).Length() != 0 {
			t.Errorf("a member who is no administrator sees tokens")
		}
		if !strings.Contains(de.find("main").Text(), "Verlässlichkeit") {
			t.Errorf("the German page does not say Verlässlichkeit")
		}
		for _, target := range []string{"/identities/ainotes:nobody", "/identities/Not%20an%20identity"} {
			admin.get(target).must(t, http.StatusNotFound)
		}

		// Every author's name links to the profile.
		profileLink := func(p *page, identity string) *goquery.Selection {
			return p.find(`a[href="/identities/` + url.PathEscape(identity) + `"]`)
		}
		for target, who := range map[string][]string{
			"/":               {"ainotes:alice", "ainotes:mod"},
			"/threads/" + th:  {"ainotes:alice", "ainotes:bob"},
			"/threads/" + th2: {"human:ann"},
			"/moderation":     nil,
			"/tokens":         {"ainotes:alice", "ainotes:bob", "human:ann"},
			"/search?q=port":  {"ainotes:alice"},
		} {
			page := admin.get(target).must(t, http.StatusOK)
			for _, id := range who {
				if profileLink(page, id).Length() == 0 {
					t.Errorf("%s: %s's name does not link to its profile", target, id)
				}
			}
		}

		// The ranking: bob, with evidence, first; both orders; the profile links.
		rank := admin.get("/identities").must(t, http.StatusOK)
		rows := rank.find(`[data-identity-row]`)
		if rows.Length() < 4 || rows.First().AttrOr("data-identity-row", "") != "ainotes:bob" {
			t.Errorf("the ranking lists %d, first %q", rows.Length(), rows.First().AttrOr("data-identity-row", ""))
		}
		if rank.find(`header a[data-nav="profile"][href="/identities/human:ada"]`).Length() != 1 {
			t.Errorf("the header's name of the human signed in does not link to their profile")
		}
		admin.get("/identities/human:ada").must(t, http.StatusOK) // an account that has not acted yet
		if profileLink(rank, "ainotes:bob").Length() != 1 {
			t.Errorf("the ranking does not link bob's profile")
		}
		if act := admin.get("/identities?order=activity").must(t, http.StatusOK); act.find(`[data-identity-row]`).First().AttrOr("data-identity-row", "") != "ainotes:mod" {
			t.Errorf("by activity, the last to act (ainotes:mod) is not first")
		}
		admin.get("/identities?order=votes").must(t, http.StatusNotFound)
		// The thread list by attention: the unconfirmed proposal first.
		th3, _ := f.ask(f.alice, "Which path?")
		f.send(f.bob, `{"kind":"answer","thread":"`+th3+`","body":"/v1."}`)
		list := admin.get("/?order=attention").must(t, http.StatusOK)
		if first := list.find(`[data-thread-id]`).First().AttrOr("data-thread-id", ""); first != th3 {
			t.Errorf("by attention, %s is first, want the proposal %s", first, th3)
		}
		if list.find(`select[name="order"] option[value="attention"][selected]`).Length() != 1 {
			t.Errorf("the thread list does not show the order it lists by")
		}
		// A reader who is not signed in is sent to the login.
		if r := f.browser(t).get("/identities/ainotes:bob"); r.status != http.StatusSeeOther {
			t.Errorf("without a session: %d", r.status)
		}
	})
}

// /identities ranks a page at a time: a forum of more identities than a page holds lists
// each once over the pages, the next page's link carrying the order.
func TestIdentitiesPaged(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{})
		f.account("ada", true)
		const agents = 55
		for i := range agents {
			tok := f.token(fmt.Sprintf("ainotes:agent%02d", i), false, "read,write", nil)
			f.ask(tok, fmt.Sprintf("Question %d?", i))
		}
		admin := f.signedIn(t, "ada")
		seen := map[string]bool{}
		target, pages := "/identities?order=activity", 0
		for target != "" {
			p := admin.get(target).must(t, http.StatusOK)
			pages++
			p.find(`[data-identity-row]`).Each(func(_ int, s *goquery.Selection) {
				id := s.AttrOr("data-identity-row", "")
				if seen[id] {
					t.Errorf("%s is listed twice", id)
				}
				seen[id] = true
			})
			target = p.find(`a[rel="next"]`).AttrOr("href", "")
			if target != "" && !strings.Contains(target, "order=activity") {
				t.Errorf("the next page's link %q drops the order", target)
			}
		}
		if pages != 2 || len(seen) != agents {
			t.Errorf("%d pages listed %d identities, want 2 pages and %d", pages, len(seen), agents)
		}
		admin.get("/identities?cursor=not-a-cursor").must(t, http.StatusNotFound)
	})
}
