package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// The graph page draws the claim graph as an inline SVG (a named image, each claim a node
// filled by its certainty), lists the claims as its text alternative, filters by thread and
// state, and offers every export format for download with the reader's session.
func TestGraphPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		supported := f.assert(f.alice, thread, ask, "8080 <script>alert(1)</script>")
		f.attest(f.bob, supported)
		refuted := f.assert(f.bob, thread, ask, "9090")
		f.must(f.post("/v1/claims/"+refuted+"/refute", f.alice, `{"evidence":`+proofLog+`,"body":"It printed 8080."}`), http.StatusOK)
		other, otherAsk := f.ask(f.bob, "Which database?")
		elsewhere := f.assert(f.bob, other, otherAsk, "SQLite by default")

		p := b.get("/graph").must(t, http.StatusOK)
		svg := p.find(`figure svg[role="img"]`)
		if svg.Length() != 1 || svg.Find(`title#graph-svg-title`).Length() != 1 || svg.Find(`desc#graph-svg-desc`).Length() != 1 {
			t.Fatalf("no inline SVG named by its title and description:\n%s", p.body)
		}
		if svg.Find(`g#`+supported+`.certainty-supported`).Length() != 1 || svg.Find(`g#`+refuted+`.certainty-refuted.grounded-out`).Length() != 1 {
			t.Error("the SVG does not draw the claims by their certainty and grounded label")
		}
		if svg.Find(`g#`+elsewhere).Length() != 1 {
			t.Error("the forum's graph lacks the other thread's claim")
		}
		if strings.Contains(p.body, "<script>alert") {
			t.Error("a statement reached the page as markup")
		}
		for claim, state := range map[string]string{supported: "supported", refuted: "refuted", elsewhere: "unverified"} {
			if p.find(`.graph-claims [data-claim-id="`+claim+`"][data-claim-state="`+state+`"]`).Length() != 1 {
				t.Errorf("the text alternative lacks %s in state %s", claim, state)
			}
		}
		for _, format := range []string{"json", "graphml", "dot", "aif"} {
			if p.find(`a[download][data-format="`+format+`"][href="/graph/export?format=`+format+`"]`).Length() != 1 {
				t.Errorf("no download link for %s", format)
			}
		}
		if p.find(`nav a[href="/graph"][aria-current="page"]`).Length() != 1 {
			t.Error("the header navigation does not mark the graph page")
		}

		for _, path := range []string{"/threads/" + thread + "/graph", "/graph?thread=" + thread} {
			p = b.get(path).must(t, http.StatusOK)
			if p.find(`svg g#`+supported).Length() != 1 || p.find(`svg g#`+elsewhere).Length() != 0 {
				t.Errorf("%s does not draw only the thread's claims", path)
			}
			if p.find(`a[data-format="dot"][href="/graph/export?format=dot&thread=`+thread+`"]`).Length() != 1 {
				t.Errorf("%s: the downloads are not the thread's", path)
			}
		}
		p = b.get("/graph?state=refuted").must(t, http.StatusOK)
		if p.find(`svg g#`+refuted).Length() != 1 || p.find(`svg g#`+supported).Length() != 0 || p.find(`svg g.refutation`).Length() != 1 {
			t.Errorf("the state filter does not keep the refuted claim with its refutation alone")
		}
		if p.find(`select[name="state"] option[value="refuted"][selected]`).Length() != 1 {
			t.Error("the filter form does not keep the chosen state")
		}
		p = b.get("/graph?state=verified").must(t, http.StatusOK)
		if p.find("figure svg").Length() != 0 || p.find("figure .empty").Length() != 1 {
			t.Error("a filter nothing matches draws a picture or says nothing")
		}
		// A typo in the form's thread or claim field is refused beside the field, the form
		// kept as typed; an unknown address stays the 404 page.
		for path, field := range map[string]string{
			"/graph?thread=nonsense": "thread", "/graph?thread=th_999": "thread",
			"/graph?claim=cl_x": "claim", "/graph?claim=cl_999": "claim", "/graph?claim=" + supported + "&thread=" + other: "claim",
		} {
			p = b.get(path+"&lang=de").must(t, http.StatusBadRequest)
			input := p.find(`form.filters input[name="` + field + `"][aria-invalid="true"][aria-describedby="graph-` + field + `-error"]`)
			if input.Length() != 1 || p.find(`form.filters #graph-`+field+`-error.refusal[data-field="`+field+`"]`).Length() != 1 {
				t.Errorf("%s: no refusal beside the %s field:\n%s", path, field, p.body)
			}
			if !strings.Contains(p.text("#graph-"+field+"-error"), "Schreiben Sie") && !strings.Contains(p.text("#graph-"+field+"-error"), "gibt es") {
				t.Errorf("%s: the refusal is not in German: %q", path, p.text("#graph-"+field+"-error"))
			}
			if p.find("h1").Text() == "" || p.find(`[data-page="graph"]`).Length() != 1 {
				t.Errorf("%s: not the graph page", path)
			}
		}
		b.get("/threads/th_999/graph").must(t, http.StatusNotFound)

		for format, media := range map[string]string{"json": "application/json", "graphml": "application/graphml+xml", "dot": "text/vnd.graphviz", "aif": "application/json"} {
			res := b.get("/graph/export?format="+format+"&thread="+thread).must(t, http.StatusOK)
			if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, media) {
				t.Errorf("the %s download is %q", format, ct)
			}
			if cd := res.header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="parley-graph-`+thread+`.`) {
				t.Errorf("the %s download is not an attachment: %q", format, cd)
			}
			if !strings.Contains(res.body, supported) || strings.Contains(res.body, elsewhere+`"`) {
				t.Errorf("the %s download is not the thread's graph", format)
			}
		}
		b.get("/graph/export?format=pdf").must(t, http.StatusNotFound)
		if res := f.browser(t).get("/graph"); res.status != http.StatusSeeOther {
			t.Errorf("a visitor reads the graph of a closed forum: %d", res.status)
		}
	})
}

// Where reading is public a visitor reads the claims and their graph, but is offered no
// control that acts.
func TestClaimsReadPublicly(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{PublicRead: true})
		thread, ask := f.ask(f.alice, "Which port?")
		claim := f.assert(f.alice, thread, ask, "8080")
		f.attest(f.bob, claim)
		visitor := f.browser(t)
		p := visitor.get("/threads/"+thread).must(t, http.StatusOK)
		if p.find(`[data-claim-id="`+claim+`"][data-claim-state="supported"]`).Length() != 1 || p.find(`[data-action]`).Length() != 0 {
			t.Errorf("a visitor does not see the card, or sees controls:\n%s", p.body)
		}
		if visitor.get("/graph").must(t, http.StatusOK).find(`figure svg g#`+claim).Length() != 1 {
			t.Error("a visitor does not see the claim in the graph")
		}
		if res := visitor.get("/graph/export?format=dot").must(t, http.StatusOK); !strings.Contains(res.body, claim) {
			t.Error("a visitor cannot download the graph")
		}
	})
}

// A graph of more claims than the page lays out is not drawn, but listed whole, with the
// reason in the reader's language; a filter that narrows it draws it again.
func TestGraphTooLargeToDraw(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1 << 20
		limits.ThreadMaxClaims = 1000 // one thread holds more claims than the page draws
		f, b, thread, ask := claimSite(t, db, limits)
		const many = 201 // one more than the page draws
		var first string
		for i := range many {
			id := f.assert(f.alice, thread, ask, "claim number "+strconv.Itoa(i))
			if i == 0 {
				first = id
			}
		}
		f.attest(f.bob, first)
		p := b.get("/graph?lang=de").must(t, http.StatusOK)
		if p.find("figure svg").Length() != 0 || !strings.Contains(p.text("figure [data-too-large]"), "201 Behauptungen") {
			t.Errorf("a graph of %d claims is drawn, or the page does not say why not: %q", many, p.text("figure"))
		}
		if n := p.find(".graph-claims [data-claim-id]").Length(); n != many {
			t.Errorf("the list holds %d claims, want all %d", n, many)
		}
		if p = b.get("/graph?state=supported").must(t, http.StatusOK); p.find("figure svg g#"+first).Length() != 1 {
			t.Error("the state filter does not bring the picture back")
		}
	})
}

// The picture fits its box at first sight (scaled by its viewBox, no fixed height), zooms and
// pans by plain links that crop the viewBox, speaks the reader's language in its node and edge
// labels, links every node to its place in the thread, and draws one claim's neighbourhood.
func TestGraphPageFitsZoomsAndLinks(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.Limits{})
		older := f.assert(f.alice, thread, ask, "8080")
		f.attest(f.bob, older)
		newer := f.assert(f.alice, thread, ask, "8081 since 1.2", `"supersedes":["`+older+`"]`)
		f.attest(f.bob, newer)
		lone := f.assert(f.bob, thread, ask, "SQLite by default")

		p := b.get("/graph?lang=de").must(t, http.StatusOK)
		svg := p.find("figure#graph-picture svg.graph-svg")
		if svg.Length() != 1 {
			t.Fatalf("no fitted SVG:\n%s", p.body)
		}
		width := svg.AttrOr("width", "")
		_, height := svg.Attr("height")
		box := viewBox(t, svg.AttrOr("viewBox", ""))
		if !strings.HasSuffix(width, "pt") || height || box[2] <= 0 {
			t.Errorf("the SVG keeps a fixed height, lacks its own width as its largest, or its viewBox: width %q, height %v, viewBox %v", width, height, box)
		}
		words := svg.Find("text").Text()
		for _, w := range []string{"gestützt", "ersetzt", "stützt", "verankert in", "Bezeugung · ainotes:bob", "begründet: IN"} {
			if !strings.Contains(words, w) {
				t.Errorf("the German drawing lacks %q: %s", w, words)
			}
		}
		for _, w := range []string{"supports", "anchored", "supported", "attestation", "grounded"} {
			if strings.Contains(words, w) {
				t.Errorf("the German drawing shows the English %q: %s", w, words)
			}
		}
		for _, id := range []string{older, newer, lone, ask} {
			if svg.Find(`g#`+id+` a[href="/threads/`+thread+`#`+id+`"]`).Length() != 1 {
				t.Errorf("node %s does not link to its place in the thread", id)
			}
		}
		if p.find(`nav.graph-view [data-view^="pan-"]`).Length() != 0 || p.find(`nav.graph-view [data-view="fit"]`).Length() != 0 {
			t.Error("the whole picture offers pan or fit links")
		}
		zoomIn := p.find(`nav.graph-view a[data-view="zoom-in"]`).AttrOr("href", "")
		if !strings.Contains(zoomIn, "zoom=2") {
			t.Fatalf("no zoom-in link: %q", zoomIn)
		}
		p = b.get(zoomIn).must(t, http.StatusOK)
		zoomed := viewBox(t, p.find("svg.graph-svg").AttrOr("viewBox", ""))
		if d := zoomed[2] - box[2]/2; d > 0.05 || d < -0.05 || zoomed[0] <= box[0] {
			t.Errorf("zoom 2 shows viewBox %v of %v, want the centre half", zoomed, box)
		}
		for _, link := range []string{"fit", "zoom-out", "zoom-in", "pan-left", "pan-right", "pan-up", "pan-down"} {
			if p.find(`nav.graph-view a[data-view="`+link+`"]`).Length() != 1 {
				t.Errorf("zoom 2 from the centre offers no %s link", link)
			}
		}
		right := p.find(`nav.graph-view a[data-view="pan-right"]`).AttrOr("href", "")
		p = b.get(right).must(t, http.StatusOK)
		if panned := viewBox(t, p.find("svg.graph-svg").AttrOr("viewBox", "")); panned[0] <= zoomed[0] || p.find(`[data-view="pan-right"]`).Length() != 0 {
			t.Errorf("panning right shows viewBox %v after %v, or goes on past the edge", panned, zoomed)
		}
		b.get("/graph?zoom=3&x=-5&y=99").must(t, http.StatusOK) // an odd view is the whole picture, not a refusal

		p = b.get("/graph?claim="+strings.TrimPrefix(older, "cl_")).must(t, http.StatusOK)
		if p.find(`[data-around="`+older+`"]`).Length() != 1 {
			t.Error("the neighbourhood view does not say whose neighbourhood it is")
		}
		for id, want := range map[string]int{older: 1, newer: 1, ask: 1, lone: 0} {
			if got := p.find(`svg g#` + id).Length(); got != want {
				t.Errorf("the neighbourhood of %s draws %s %d times, want %d", older, id, got, want)
			}
		}
		if p.find(`svg g.attestation`).Length() != 2 {
			t.Error("the neighbourhood lacks the attestations of the claim and of its successor")
		}
		if p = b.get("/graph").must(t, http.StatusOK); p.find(`.graph-claims a[data-neighbourhood="`+lone+`"][href="/graph?claim=`+lone+`"]`).Length() != 1 {
			t.Error("the list does not link each claim's neighbourhood")
		}
		if b.get("/threads/"+thread+"/graph?claim="+lone).must(t, http.StatusOK).find(`svg g#`+lone).Length() != 1 {
			t.Error("the thread's graph page does not draw a claim's neighbourhood")
		}
	})
}

// viewBox reads an SVG viewBox's four numbers.
func viewBox(t *testing.T, s string) [4]float64 {
	t.Helper()
	var out [4]float64
	f := strings.Fields(s)
	if len(f) != 4 {
		t.Fatalf("viewBox %q", s)
	}
	for i := range f {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			t.Fatalf("viewBox %q: %v", s, err)
		}
		out[i] = v
	}
	return out
}
