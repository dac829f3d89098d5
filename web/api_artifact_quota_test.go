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

// Artifact quotas over PUT /v1/artifacts and artifact_put, on both databases: the put over a
// quota is 413 payload_too_large naming it over HTTP, the same refusal over MCP, and nothing
// is written; bytes stored already are still taken at the quota; the manifest shows both.
func TestArtifactQuotasOverHTTPAndMCP(t *testing.T) {
	cases := []struct {
		name               string
		perIdentity, total int
		// Alice stores 6 bytes, and bob 6 more when bobFills; then alice's next 5 new
		// bytes are over quota.
		bobFills bool
		quota    string
	}{
		{"alice's own quota", 10, 1000, false, "artifact_bytes_per_identity"},
		{"the store's total", 1000, 15, true, "artifact_bytes_total"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storagetest.Each(t, func(t *testing.T, db *storage.DB) {
				limits := protocol.DefaultLimits()
				limits.ArtifactBytesPerIdentity, limits.ArtifactBytesTotal = c.perIdentity, c.total
				f := newForum(t, db, limits)
				manifest := f.must(f.get("/v1/manifest", ""), http.StatusOK).json["limits"].(map[string]any)
				if manifest["artifact_bytes_per_identity"] != float64(c.perIdentity) || manifest["artifact_bytes_total"] != float64(c.total) {
					t.Errorf("GET /v1/manifest shows the quotas %v and %v, want %d and %d",
						manifest["artifact_bytes_per_identity"], manifest["artifact_bytes_total"], c.perIdentity, c.total)
				}
				aliceMCP := f.mcpAs("Bearer " + f.alice)
				put := func(content string) (map[string]any, bool) {
					t.Helper()
					res, err := aliceMCP.CallTool(context.Background(), &mcp.CallToolParams{Name: "artifact_put",
						Arguments: map[string]any{"content_base64": base64.StdEncoding.EncodeToString([]byte(content))}})
					if err != nil {
						t.Fatalf("artifact_put: %v", err)
					}
					raw, _ := json.Marshal(res.StructuredContent)
					var obj map[string]any
					if err := json.Unmarshal(raw, &obj); err != nil {
						t.Fatal(err)
					}
					return obj, res.IsError
				}

				mine := "alice1"
				f.must(f.putArtifact(f.alice, "", mine), http.StatusCreated)
				if c.bobFills {
					f.must(f.putArtifact(f.bob, "", "bob123"), http.StatusCreated)
				}
				rows := countArtifacts(t, db)
				overHTTP := f.putArtifact(f.alice, "", "12345")
				if overHTTP.status != http.StatusRequestEntityTooLarge || overHTTP.reason() != "payload_too_large" ||
					!strings.Contains(overHTTP.at("message"), c.quota) {
					t.Errorf("PUT over %s: %d %s, want 413 payload_too_large naming it", c.quota, overHTTP.status, overHTTP.body)
				}
				overMCP, refused := put("12345")
				if !refused || !cmp.Equal(overMCP, overHTTP.json) {
					t.Errorf("artifact_put over %s: %v (error %v), want what PUT answered: %s", c.quota, overMCP, refused, overHTTP.body)
				}
				if after := countArtifacts(t, db); after != rows {
					t.Errorf("refused puts wrote: %d artifacts became %d", rows, after)
				}
				// Bytes stored already are the same artifact: nothing new, taken at the quota.
				f.must(f.putArtifact(f.alice, "", mine), http.StatusCreated)
				if obj, refused := put(mine); refused || obj["ref"] != protocol.ArtifactRef([]byte(mine)) {
					t.Errorf("artifact_put of bytes stored already, at the quota: %v", obj)
				}
				if c.bobFills {
					if obj, refused := put("bob123"); refused {
						t.Errorf("artifact_put of bob's bytes, at the total: %v", obj)
					}
				}
			})
		})
	}
}

// countArtifacts counts the artifacts stored.
func countArtifacts(t *testing.T, db *storage.DB) int {
	t.Helper()
	var n int
	if err := db.NewRaw("SELECT count(*) FROM artifacts").Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}
