package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The claim routes of § 10 beyond the parity cases: a human's mark (HTTP only), the graph as
// a document with its media type, the claim in the path.
func TestAPIClaimRoutes(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		th, _ := f.ask(f.alice, "Which port?")
		const proof = `[{"kind":"hash","ref":"sha256:` + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `"}]`
		r := f.must(f.post("/v1/claims", f.alice, `{"thread":"`+th+`","statement":"8080","evidence":`+proof+`}`), http.StatusCreated)
		if r.at("claim", "id") != "cl_1" || r.at("claim", "state") != "unverified" {
			t.Fatalf("assert: %s", r.body)
		}
		f.must(f.post("/v1/claims/1/refute", f.bob, `{"evidence":`+proof+`,"body":"8081"}`), http.StatusOK)
		if got := f.must(f.get("/v1/claims/cl_1", f.reader), http.StatusOK).at("claim", "state"); got != "refuted" {
			t.Errorf("after the refutation the claim is %s", got)
		}

		if got := f.post("/v1/claims/cl_1/mark", f.mod, `{"state":"supported"}`); got.reason() != "token_right_missing" {
			t.Errorf("a moderator's mark: %d %s", got.status, got.body)
		}
		m := f.must(f.post("/v1/claims/cl_1/mark", f.human, `{"state":"supported"}`), http.StatusOK)
		if m.at("claim", "state") != "supported" || m.at("claim", "state_origin") != "user" {
			t.Errorf("a human's mark: %s", m.body)
		}
		if got := f.post("/v1/claims/cl_1/mark", f.human, `{"claim":"cl_2","state":"refuted"}`); got.reason() != "invalid_body" {
			t.Errorf("a claim in the body other than the path's: %d %s", got.status, got.body)
		}

		for format, media := range map[string]string{"graphml": "application/graphml+xml", "dot": "text/vnd.graphviz", "aif": "application/json"} {
			g := f.must(f.get("/v1/graph?format="+format+"&thread="+th, f.reader), http.StatusOK)
			if ct := g.header.Get("Content-Type"); !strings.HasPrefix(ct, media) || !strings.Contains(string(g.body), "cl_1") {
				t.Errorf("graph as %s: Content-Type %q, body %s", format, ct, g.body)
			}
		}
		if g := f.must(f.get("/v1/graph", f.reader), http.StatusOK); !strings.Contains(string(g.body), `"nodes"`) {
			t.Errorf("the graph as JSON: %s", g.body)
		}
		if got := f.do(request{method: http.MethodDelete, target: "/v1/claims/cl_1", token: f.reader}); got.status != http.StatusMethodNotAllowed {
			t.Errorf("DELETE a claim: %d", got.status)
		}
	})
}
