package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 13 artifacts over HTTP, on both databases: raw bytes in, the same bytes out with a strong
// ETag, conditional requests, and never a page made of what someone uploaded.

// putArtifact sends content as the raw body of PUT /v1/artifacts.
func (f *forum) putArtifact(token, mediaType, content string) *reply {
	f.t.Helper()
	return f.do(request{method: http.MethodPut, target: "/v1/artifacts", token: token, body: content,
		header: map[string]string{"Content-Type": mediaType}})
}

func TestArtifactsOverHTTP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.ArtifactMaxBytes = 32 << 10 // over request_max_bytes: the route has its own limit
		f := newForum(t, db, limits)
		log := "=== RUN TestBuild\n--- PASS: TestBuild (0.01s)\n"
		put := f.must(f.putArtifact(f.alice, "text/plain", log), http.StatusCreated)
		ref := protocol.ArtifactRef([]byte(log))
		if put.at("ref") != ref || put.json["size"] != float64(len(log)) || put.at("media_type") != "text/plain" {
			t.Fatalf("PUT answered %s, want ref %s", put.body, ref)
		}
		again := f.must(f.putArtifact(f.bob, "application/x-log", log), http.StatusCreated)
		if string(again.body) != string(put.body) {
			t.Errorf("the same bytes again answered %s, want %s", again.body, put.body)
		}

		got := f.must(f.get("/v1/artifacts/"+ref, f.reader), http.StatusOK)
		etag := `"` + ref + `"`
		wantHeaders := map[string]string{
			"Content-Type": "text/plain; charset=utf-8", "ETag": etag, "X-Content-Type-Options": "nosniff",
			"Cache-Control": "private, max-age=31536000, immutable", "Content-Disposition": "",
		}
		for name, want := range wantHeaders {
			if v := got.header.Get(name); v != want {
				t.Errorf("GET: %s is %q, want %q", name, v, want)
			}
		}
		if string(got.body) != log {
			t.Errorf("GET gave %q, want %q", got.body, log)
		}
		for _, inm := range []string{etag, "W/" + etag, `"sha256:00", ` + etag, "*"} {
			r := f.do(request{method: http.MethodGet, target: "/v1/artifacts/" + ref, token: f.reader, header: map[string]string{"If-None-Match": inm}})
			if r.status != http.StatusNotModified || len(r.body) != 0 || r.header.Get("ETag") != etag {
				t.Errorf("If-None-Match %s: %d %q, ETag %q; want 304, no body", inm, r.status, r.body, r.header.Get("ETag"))
			}
		}
		other := f.do(request{method: http.MethodGet, target: "/v1/artifacts/" + ref, token: f.reader, header: map[string]string{"If-None-Match": `"sha256:00"`}})
		f.must(other, http.StatusOK)
		head := f.do(request{method: http.MethodHead, target: "/v1/artifacts/" + ref, token: f.reader})
		if head.status != http.StatusOK || head.header.Get("ETag") != etag || len(head.body) != 0 {
			t.Errorf("HEAD: %d, ETag %q, %d bytes", head.status, head.header.Get("ETag"), len(head.body))
		}

		// An uploaded page is served as an attachment of no type a browser renders.
		page := `<html><script>alert(document.cookie)</script></html>`
		htmlRef := f.must(f.putArtifact(f.alice, "text/html; charset=utf-8", page), http.StatusCreated).at("ref")
		served := f.must(f.get("/v1/artifacts/"+htmlRef, f.reader), http.StatusOK)
		if ct := served.header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("an HTML artifact is served as %q", ct)
		}
		if cd := served.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
			t.Errorf("an HTML artifact is served with Content-Disposition %q, not as an attachment", cd)
		}
		if csp := served.header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") {
			t.Errorf("an HTML artifact is served with the policy %q", csp)
		}

		big := strings.Repeat("x", limits.ArtifactMaxBytes)
		f.must(f.putArtifact(f.alice, "text/plain", big), http.StatusCreated)
		refusals := []struct {
			name   string
			r      *reply
			reason string
		}{
			{"over artifact_max_bytes", f.putArtifact(f.alice, "text/plain", big+"y"), "payload_too_large"},
			{"over it without a token", f.putArtifact("", "text/plain", big+"y"), "payload_too_large"},
			{"no token", f.putArtifact("", "text/plain", "x"), "unauthenticated"},
			{"a token that only reads", f.putArtifact(f.reader, "text/plain", "x"), "token_right_missing"},
			{"no bytes", f.do(request{method: http.MethodPut, target: "/v1/artifacts", token: f.alice}), "invalid_body"},
			{"a bad media type", f.putArtifact(f.alice, "nonsense", "x"), "invalid_body"},
			{"get without a token", f.get("/v1/artifacts/"+ref, ""), "unauthenticated"},
			{"get a bad ref", f.get("/v1/artifacts/sha256:abc", f.reader), "invalid_body"},
			{"get with a query", f.get("/v1/artifacts/"+ref+"?x=1", f.reader), "invalid_body"},
			{"get one never stored", f.get("/v1/artifacts/sha256:"+strings.Repeat("0", 64), f.reader), "not_found"},
			{"POST is no method of it", f.post("/v1/artifacts", f.alice, `{}`), "not_found"},
		}
		for _, c := range refusals {
			if c.r.reason() != c.reason || c.r.status < 400 {
				t.Errorf("%s: %d %s, want %s", c.name, c.r.status, c.r.body, c.reason)
			}
		}
	})
}

// artifact_put and artifact_get answer what PUT and GET /v1/artifacts answer: the same
// object for the same bytes, the same refusal for the same fault.
func TestArtifactParityOfMCPAndHTTP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.DefaultLimits())
		content := "panic: runtime error: index out of range [3] with length 3\n"
		overHTTP := f.must(f.putArtifact(f.alice, "text/plain", content), http.StatusCreated).json
		cs := f.mcpAs("Bearer " + f.alice)
		call := func(cs *mcp.ClientSession, tool string, args any) (map[string]any, bool) {
			t.Helper()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				t.Fatal(err)
			}
			return obj, res.IsError
		}
		overMCP, refused := call(cs, "artifact_put", map[string]any{"content_base64": base64.StdEncoding.EncodeToString([]byte(content)), "media_type": "text/plain"})
		if refused || !cmp.Equal(overHTTP, overMCP) {
			t.Errorf("artifact_put answered %v, PUT %v", overMCP, overHTTP)
		}
		got, refused := call(f.mcpAs("Bearer "+f.reader), "artifact_get", map[string]any{"ref": overHTTP["ref"]})
		if refused || got["content_base64"] != base64.StdEncoding.EncodeToString([]byte(content)) || got["media_type"] != "text/plain" {
			t.Errorf("artifact_get answered %v", got)
		}
		// A whole artifact of artifact_max_bytes fits through MCP too.
		full := strings.Repeat("z", protocol.DefaultLimits().ArtifactMaxBytes)
		if obj, refused := call(cs, "artifact_put", map[string]any{"content_base64": base64.StdEncoding.EncodeToString([]byte(full))}); refused {
			t.Errorf("artifact_put of artifact_max_bytes refused: %v", obj)
		}
		same := func(name string, overHTTP *reply, overMCP map[string]any) {
			t.Helper()
			if !cmp.Equal(overHTTP.json, overMCP) {
				t.Errorf("%s: HTTP %s, MCP %v", name, overHTTP.body, overMCP)
			}
		}
		never := "sha256:" + strings.Repeat("0", 64)
		obj, _ := call(f.mcpAs("Bearer "+f.reader), "artifact_get", map[string]any{"ref": never})
		same("never stored", f.get("/v1/artifacts/"+never, f.reader), obj)
		obj, _ = call(f.mcpAs(""), "artifact_get", map[string]any{"ref": never})
		same("no token", f.get("/v1/artifacts/"+never, ""), obj)
		obj, _ = call(f.mcpAs("Bearer "+f.reader), "artifact_put", map[string]any{"content_base64": "eA=="})
		same("a reader stores", f.putArtifact(f.reader, "", "x"), obj)
		obj, _ = call(cs, "artifact_put", map[string]any{"content_base64": base64.StdEncoding.EncodeToString([]byte(full + "!"))})
		same("one byte too many", f.putArtifact(f.alice, "", full+"!"), obj)
	})
}
