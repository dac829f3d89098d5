package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// GET /v1/export serves every format to a token with read, within its rooms, in the order of
// § 9; the dataset streams and holds under the offline check; each export's slot is given
// back when it ends. GET /v1/schema/{type}.json serves the line types' schemas to anyone.
func TestExportRoute(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.Limits{})
		ctx := context.Background()
		if err := db.Write(ctx, func(ctx context.Context, w *storage.Forum) error {
			return w.CreateRoom(ctx, &storage.Room{Name: "research", Title: "Research"})
		}); err != nil {
			t.Fatal(err)
		}
		general, _ := f.ask(f.alice, "Which port does general use?")
		research := f.must(f.post("/v1/messages", f.alice, `{"kind":"ask","body":"What does research find?","room":"research"}`), http.StatusCreated).at("thread", "id")
		if _, err := db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:inresearch", SecretHash: protocol.HashTokenSecret("research-only-secret-0123456789abcdef"),
			Rights: "read", Rooms: "2"}); err != nil {
			t.Fatal(err)
		}
		inResearch := "research-only-secret-0123456789abcdef"
		writer := f.token("ainotes:writer", false, "write", nil)

		threadsOf := func(r *reply) []string {
			t.Helper()
			var out []string
			for _, line := range bytes.Split(bytes.TrimSpace(r.body), []byte("\n")) {
				var l struct{ Type, ID string }
				if err := json.Unmarshal(line, &l); err != nil {
					t.Fatalf("a line that is no JSON: %s", line)
				}
				if l.Type == "thread" {
					out = append(out, l.ID)
				}
			}
			return out
		}
		// Five in a row by one identity: each gives its slot back when its stream ends.
		for range 5 {
			r := f.must(f.get("/v1/export?format=jsonl", f.reader), http.StatusOK)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/jsonl") {
				t.Errorf("Content-Type %q", ct)
			}
			if got := strings.Join(threadsOf(r), " "); got != general+" "+research {
				t.Errorf("the dataset's threads are %s, want %s %s", got, general, research)
			}
			if rep, err := graph.CheckDataset(bytes.NewReader(r.body)); err != nil || rep.Failed() != 0 {
				t.Fatalf("the dataset over HTTP does not hold: %v %+v", err, rep)
			}
		}
		if got := strings.Join(threadsOf(f.must(f.get("/v1/export?format=jsonl", inResearch), http.StatusOK)), " "); got != research {
			t.Errorf("the scoped token's dataset holds %s, want %s alone", got, research)
		}
		for range 3 {
			f.must(f.do(request{method: http.MethodHead, target: "/v1/export?format=jsonl", token: f.reader}), http.StatusOK)
		}
		for format, media := range map[string]string{"": "application/json", "json": "application/json", "graphml": "application/graphml+xml",
			"aif": "application/json", "dot": "text/vnd.graphviz"} {
			target := "/v1/export"
			if format != "" {
				target += "?format=" + format
			}
			r := f.must(f.get(target, f.reader), http.StatusOK)
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, media) || len(r.body) == 0 {
				t.Errorf("format %q: Content-Type %q, %d bytes", format, ct, len(r.body))
			}
		}
		for _, c := range []struct {
			target, token, reason string
			status                int
		}{
			{"/v1/export?format=jsonl", "", "unauthenticated", http.StatusUnauthorized},
			{"/v1/export?format=jsonl", writer, "token_right_missing", http.StatusForbidden},
			{"/v1/export?format=csv", f.reader, "invalid_body", http.StatusBadRequest},
			{"/v1/export?format=jsonl&thread=" + general, inResearch, "not_found", http.StatusNotFound},
			{"/v1/export?format=jsonl&room=nowhere", f.reader, "not_found", http.StatusNotFound},
			{"/v1/schema/nothing.json", "", "not_found", http.StatusNotFound},
		} {
			if r := f.get(c.target, c.token); r.status != c.status || r.reason() != c.reason {
				t.Errorf("GET %s: %d %s, want %d %s", c.target, r.status, r.body, c.status, c.reason)
			}
		}
		if r := f.post("/v1/export", f.reader, `{}`); r.status != http.StatusMethodNotAllowed {
			t.Errorf("POST /v1/export: %d", r.status)
		}
		for _, typ := range protocol.DatasetLineTypes {
			r := f.must(f.get("/v1/schema/"+typ+".json", ""), http.StatusOK)
			want, _ := protocol.DatasetSchema(typ)
			if !bytes.Equal(r.body, want) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/schema+json") {
				t.Errorf("/v1/schema/%s.json: %s, %d bytes", typ, r.header.Get("Content-Type"), len(r.body))
			}
		}
	})
}
