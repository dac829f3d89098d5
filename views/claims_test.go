package views

import (
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
)

// A claim card shows evidence as pointers: an http(s) URL as a link that passes no referrer
// trust, anything else never as a link; hashes and commits as code. Controls only for a
// human signed in, verify only where a seal can change the claim.
func TestClaimCard(t *testing.T) {
	note := "the docs"
	claim := &protocol.ClaimView{
		ID: "cl_7", Thread: "th_1", Anchor: "msg_1", Statement: "8080", AuthorKind: "human",
		AssertedBy: protocol.Party{Identity: "human:bea"}, State: protocol.ClaimSupported, Certainty: "supported",
		Confirmed: true, CreatedAt: time.Now(), Quorum: protocol.Quorum{Verifiers: 1, Of: 2},
		Evidence: []protocol.Evidence{
			{Kind: "url", Ref: "https://example.org/a", Note: &note},
			{Kind: "url", Ref: "javascript:alert(1)"}, // never valid, and never a link if it were stored
			{Kind: "commit", Ref: "parley@abcdef1"},
		},
	}
	card := ClaimCard{Claim: claim, Grounded: "in", View: "thread"}

	doc := render(t, pageContext("en", &Viewer{Name: "ada"}), ClaimCardView(card))
	c := doc.Find(`article#cl_7.author-human[data-claim-id="cl_7"][data-claim-state="supported"]`)
	if c.Length() != 1 {
		t.Fatal("no card with the claim's hooks")
	}
	if links := c.Find(".evidence a"); links.Length() != 1 || links.AttrOr("href", "") != "https://example.org/a" || links.AttrOr("rel", "") != "nofollow noopener" {
		t.Errorf("the evidence links are %d, the first %q rel %q", links.Length(), links.AttrOr("href", ""), links.AttrOr("rel", ""))
	}
	if c.Find(`.evidence code`).Text() != "parley@abcdef1" {
		t.Error("the commit is not code")
	}
	if c.Find(`form[action="/claims/cl_7/verify"][hx-target="#cl_7"] [data-action="verify"]`).Length() != 1 ||
		c.Find(`form[action="/claims/cl_7/mark"] select[name="state"] option[value="superseded"]`).Length() != 0 {
		t.Error("no verify control swapping the card, or mark offers superseded")
	}
	if got := strings.Join(strings.Fields(c.Find(".stances-verifications").Text()), " "); got != "Verifications: 1 of 2 verified" {
		t.Errorf("the verifications read %q", got)
	}

	claim.State, claim.Certainty = protocol.ClaimVerified, "verified"
	if render(t, pageContext("en", &Viewer{Name: "ada"}), ClaimCardView(card)).Find(`[data-action="verify"]`).Length() != 0 {
		t.Error("a verified claim offers verify")
	}
	if render(t, pageContext("en", nil), ClaimCardView(card)).Find(`form`).Length() != 0 {
		t.Error("a reader who is not signed in is offered controls")
	}
}

// The graph's SVG becomes a named image; what names it is escaped.
func TestAccessibleSVG(t *testing.T) {
	got := accessibleSVG([]byte(`<svg width="10pt" viewBox="0 0 10 10"><g id="cl_1"></g></svg>`), `A <b>graph</b>`, "of & claims")
	want := `<svg width="10pt" viewBox="0 0 10 10" role="img" aria-labelledby="graph-svg-title graph-svg-desc" focusable="false">` +
		`<title id="graph-svg-title">A &lt;b&gt;graph&lt;/b&gt;</title><desc id="graph-svg-desc">of &amp; claims</desc><g id="cl_1"></g></svg>`
	if got != want {
		t.Errorf("accessibleSVG =\n%s\nwant\n%s", got, want)
	}
	if accessibleSVG([]byte("no picture"), "t", "d") != "" {
		t.Error("something that is no SVG is embedded")
	}
}

// An imported artifact ref that this forum's store lacks (present: false) is shown as its ref,
// said to be absent, never as a link to bytes that are not here; a stored one is a link.
func TestAbsentArtifactIsNoLink(t *testing.T) {
	absent := false
	items := []protocol.Evidence{
		{Kind: "artifact", Ref: "sha256:" + strings.Repeat("1", 64), Present: &absent},
		{Kind: "artifact", Ref: "sha256:" + strings.Repeat("2", 64)},
	}
	doc := render(t, pageContext("en", nil), EvidenceList(items, nil))
	links := doc.Find(".evidence a")
	if links.Length() != 1 || !strings.Contains(links.AttrOr("href", ""), strings.Repeat("2", 64)) {
		t.Errorf("the artifact links are %d, the first to %q", links.Length(), links.AttrOr("href", ""))
	}
	if got := doc.Find(".evidence li").First().Find(".artifact-absent").Text(); got != "not in this forum's store" {
		t.Errorf("the absent artifact reads %q", got)
	}
}
