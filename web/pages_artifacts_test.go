package web_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// tinyPNG is a PNG of one pixel, a raster image the pages may show inline.
func tinyPNG(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// legacySignedAttest lets token attest claim, then gives the attestation a version 1
// signature by a key it registers first, written into the row as a forum before version 2 of
// the signed profile stored it (no operation takes one any more); it returns the key's id.
func (f *forum) legacySignedAttest(token, claim string) string {
	f.t.Helper()
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	public := base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
	key := f.must(f.do(request{method: http.MethodPut, target: "/v1/keys", token: token, body: `{"public_key":"` + public + `"}`}), http.StatusCreated).at("key", "id")
	attested := f.must(f.post("/v1/claims/"+claim+"/attest", token, `{"evidence":`+proofLog+`}`), http.StatusOK)
	var res struct {
		Claim struct {
			Attestations []struct {
				ID string `json:"id"`
			} `json:"attestations"`
		} `json:"claim"`
	}
	if err := json.Unmarshal(attested.body, &res); err != nil || len(res.Claim.Attestations) == 0 {
		f.t.Fatalf("the attestation: %v %s", err, attested.body)
	}
	storagetest.SignLegacy(f.t, f.db, res.Claim.Attestations[len(res.Claim.Attestations)-1].ID, key, priv, time.Now())
	return key
}

// A claim card links every artifact it cites through the session's page route and shows
// inline only what the API serves inline: a text artifact as escaped text (its first bytes,
// then "show all"), an image with its note as alt text, an HTML artifact never (it
// downloads as an attachment); a signed attestation carries the signed mark with its key; the
// verifications read k of N from the claim. In German too.
func TestClaimCardArtifactsSignaturesQuorum(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.VerifyQuorum = 2
		f, b, thread, ask := claimSite(t, db, limits)
		log := "<script>alert(1)</script>\n" + strings.Repeat("ok 8080\n", 1000)
		html := `<html><body><script>alert(2)</script></body></html>`
		pic := tinyPNG(t)
		refs := map[string]string{}
		for name, a := range map[string][2]string{"log": {"text/plain", log}, "html": {"text/html", html}, "png": {"image/png", pic}} {
			refs[name] = f.must(f.putArtifact(f.alice, a[0], a[1]), http.StatusCreated).at("ref")
		}
		const statement = "parley serve listens on 8080"
		claim := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+thread+`","parent":"`+ask+`","statement":"`+statement+`","evidence":[`+
			`{"kind":"artifact","ref":"`+refs["log"]+`","note":"the build log"},{"kind":"artifact","ref":"`+refs["html"]+`"},`+
			`{"kind":"artifact","ref":"`+refs["png"]+`","note":"the port screen"}]}`), http.StatusCreated).at("claim", "id")
		key := f.legacySignedAttest(f.bob, claim)
		f.must(f.post("/v1/claims/"+claim+"/verify", f.human, `{}`), http.StatusOK)

		p := b.get("/threads/"+thread).must(t, http.StatusOK)
		c := p.find(`[data-claim-id="` + claim + `"]`)
		for name, ref := range refs {
			if c.Find(`a.artifact-link[href="/artifacts/`+ref+`"]`).Length() != 1 {
				t.Errorf("the %s artifact %s is not linked through the page route", name, ref)
			}
		}
		pre := c.Find(`pre.artifact-text`)
		if pre.Length() != 1 || !strings.HasPrefix(pre.Text(), "<script>alert(1)</script>\nok 8080") || len(pre.Text()) >= len(log) {
			t.Errorf("the text artifact is not its first bytes as text: %d pre, %.60q", pre.Length(), pre.Text())
		}
		if p.find("script:not([src])").Length() != 0 || strings.Contains(p.body, "<script>alert") {
			t.Error("an artifact's script reached the page as markup")
		}
		if c.Find(`a.artifact-all[href="/artifacts/`+refs["log"]+`"]`).Length() != 1 {
			t.Error("the cut text artifact has no link to all of it")
		}
		if img := c.Find(`img.artifact-image`); img.Length() != 1 || img.AttrOr("src", "") != "/artifacts/"+refs["png"] || img.AttrOr("alt", "") != "the port screen" {
			t.Errorf("the image artifact shows as %d images, src %q alt %q", img.Length(), img.AttrOr("src", ""), img.AttrOr("alt", ""))
		}
		htmlItem := c.Find(`a[href="/artifacts/` + refs["html"] + `"]`).Parent()
		if htmlItem.Find("pre, img, iframe, object, embed").Length() != 0 || c.Find("iframe, object, embed").Length() != 0 {
			t.Error("the HTML artifact is shown inline")
		}
		mark := c.Find(`.stances-attestations .signed-mark[data-signed-key="` + key + `"]`)
		if got := strings.Join(strings.Fields(mark.Text()), " "); got != "signed with "+key {
			t.Errorf("the signed attestation's mark reads %q, want signed with %s", got, key)
		}
		if c.Find(`.stances-verifications .signed-mark`).Length() != 0 {
			t.Error("an unsigned verification shows the signed mark")
		}
		if got := strings.Join(strings.Fields(c.Find(`.stances-verifications .stances-head`).Text()), " "); got != "Verifications: 1 of 2 verified" {
			t.Errorf("the quorum reads %q", got)
		}
		de := b.get("/threads/"+thread+"?lang=de").must(t, http.StatusOK).find(`[data-claim-id="` + claim + `"]`)
		text := strings.Join(strings.Fields(de.Text()), " ")
		for _, want := range []string{"signiert mit " + key, "Prüfsiegel: 1 von 2 geprüft", "alles zeigen"} {
			if !strings.Contains(text, want) {
				t.Errorf("the German card lacks %q: %s", want, text)
			}
		}
	})
}

// GET /artifacts/{ref} serves a reader of the pages an artifact exactly as the token route
// does: plain text as itself, HTML as an attachment of octet-stream, never sniffed, under a
// sandbox CSP, with a strong ETag and 304; nobody signed in is sent to the login; an unknown
// or malformed ref is not found.
func TestArtifactPageRoute(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, _, _ := claimSite(t, db, protocol.Limits{})
		html := `<html><body><script>alert(2)</script></body></html>`
		htmlRef := f.must(f.putArtifact(f.alice, "text/html", html), http.StatusCreated).at("ref")
		text := "listening on 8080\n"
		textRef := f.must(f.putArtifact(f.alice, "text/plain", text), http.StatusCreated).at("ref")

		for _, tc := range []struct {
			ref, body, contentType, disposition string
		}{
			{htmlRef, html, "application/octet-stream", `attachment; filename="` + strings.Replace(htmlRef, ":", "-", 1) + `"`},
			{textRef, text, "text/plain; charset=utf-8", ""},
		} {
			got := b.get("/artifacts/"+tc.ref).must(t, http.StatusOK)
			api := f.must(f.get("/v1/artifacts/"+tc.ref, f.reader), http.StatusOK)
			if got.body != tc.body || string(api.body) != tc.body {
				t.Errorf("%s: the page route gave %q, the API %q, want %q", tc.ref, got.body, api.body, tc.body)
			}
			want := map[string]string{"Content-Type": tc.contentType, "Content-Disposition": tc.disposition, "ETag": `"` + tc.ref + `"`,
				"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; sandbox"}
			for name, value := range want {
				if got.header.Get(name) != value || api.header.Get(name) != value {
					t.Errorf("%s: %s is %q on the page route, %q on the API, want %q", tc.ref, name, got.header.Get(name), api.header.Get(name), value)
				}
			}
			if again := b.get("/artifacts/"+tc.ref, "If-None-Match", `"`+tc.ref+`"`); again.status != http.StatusNotModified || again.body != "" {
				t.Errorf("%s: a conditional GET answered %d with %d bytes, want 304 and none", tc.ref, again.status, len(again.body))
			}
		}
		f.browser(t).get("/artifacts/"+textRef).redirectsTo(t, "/login?next=%2Fartifacts%2F"+strings.Replace(textRef, ":", "%3A", 1))
		b.get("/artifacts/"+protocol.ArtifactRef([]byte("never stored"))).must(t, http.StatusNotFound)
		b.get("/artifacts/sha256:nothex").must(t, http.StatusNotFound)
	})
}

// A stance signed with a § 14 proof shows the signed mark with the did:key of its proof,
// shortened in the text and whole in its data attribute and title; an unsigned stance beside
// it shows none. In German too.
func TestClaimCardProofMark(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f, b, thread, ask := claimSite(t, db, protocol.DefaultLimits())
		const statement = "parley serve listens on 8080"
		claim := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+thread+`","parent":"`+ask+`","statement":"`+statement+`","evidence":`+proofLog+`}`), http.StatusCreated).at("claim", "id")
		priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
		public := base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
		did := f.must(f.do(request{method: http.MethodPut, target: "/v1/keys", token: f.bob, body: `{"public_key":"` + public + `"}`}), http.StatusCreated).at("key", "did")
		var items []protocol.Evidence
		if err := json.Unmarshal([]byte(proofLog), &items); err != nil {
			t.Fatal(err)
		}
		doc, err := json.Marshal(protocol.StanceDocument("attest", protocol.DefaultRealm, claim, statement, "ainotes:bob", items, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		proof, err := signed.NewSigner(priv).Prove(doc, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		rawProof, _ := json.Marshal(proof)
		f.must(f.post("/v1/claims/"+claim+"/attest", f.bob, `{"evidence":`+proofLog+`,"proof":`+string(rawProof)+`}`), http.StatusOK)
		f.must(f.post("/v1/claims/"+claim+"/verify", f.human, `{}`), http.StatusOK)

		c := b.get("/threads/"+thread).must(t, http.StatusOK).find(`[data-claim-id="` + claim + `"]`)
		mark := c.Find(`.stances-attestations .signed-mark[data-signed-key="` + did + `"]`)
		text := strings.Join(strings.Fields(mark.Text()), " ")
		if mark.Length() != 1 || !strings.HasPrefix(text, "signed with did:key:z6Mk") || !strings.Contains(text, "…") || mark.Find("code").AttrOr("title", "") != did {
			t.Errorf("the proof's mark: %d marks reading %q, want one naming %s", mark.Length(), text, did)
		}
		if c.Find(`.stances-verifications .signed-mark`).Length() != 0 {
			t.Error("an unsigned verification shows the signed mark")
		}
		de := b.get("/threads/"+thread+"?lang=de").must(t, http.StatusOK).find(`[data-claim-id="` + claim + `"] .stances-attestations .signed-mark`)
		if got := strings.Join(strings.Fields(de.Text()), " "); !strings.HasPrefix(got, "signiert mit did:key:") {
			t.Errorf("the German mark reads %q", got)
		}
	})
}
