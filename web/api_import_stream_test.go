package web_test

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// POST /v1/imports reads its body as a stream (PROTOCOL.md § 14, limits.import_max_bytes): an
// export larger than any other body the server takes lands; a larger declared body than
// import_max_bytes, or a chunked one that grows past it, is 413 payload_too_large; a body that
// is no JSON is refused at its first bytes; and without a token nothing of the body is read —
// each answered while the client has not sent its body whole.
func TestImportBodyIsReadAsAStream(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		export, didA := alphaExport(t, db.Kind())
		limits := protocol.DefaultLimits()
		limits.RequestMaxBytes, limits.ArtifactMaxBytes, limits.ImportMaxBytes = 4096, 4096, 1<<20
		f := newForumWith(t, web.Options{DB: db, Limits: limits, Realm: "beta", TrustRealms: map[string]string{"alpha": didA}})
		if largest := f.app.Config().BodyLimit; len(export) <= largest {
			t.Fatalf("alpha's export has %d bytes, no more than the %d of any other body", len(export), largest)
		}
		if _, err := db.CreateAdmin(ctx, "root", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		root := f.token("human:root", true, "read,write,lock,verify", nil)
		head := func(token, framing string) string {
			h := "POST /v1/imports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + framing + "\r\n"
			if token != "" {
				h += "Authorization: Bearer " + token + "\r\n"
			}
			return h + "\r\n"
		}
		chunk := func(data string) string { return strconv.FormatInt(int64(len(data)), 16) + "\r\n" + data + "\r\n" }
		for _, c := range []struct {
			name   string
			raw    string
			status int
			reason string
		}{
			{"a declared body over import_max_bytes", head(root, "Content-Length: 1048577") + "{", http.StatusRequestEntityTooLarge, "payload_too_large"},
			{"a declared body over import_max_bytes, without a token", head("", "Content-Length: 1048577") + "{", http.StatusRequestEntityTooLarge, "payload_too_large"},
			{"a chunked body that grows past import_max_bytes", head(root, "Transfer-Encoding: chunked") + chunk("{") +
				strings.Repeat(chunk(strings.Repeat(" ", 64<<10)), 16) + chunk(" "), http.StatusRequestEntityTooLarge, "payload_too_large"},
			{"zeros", head(root, "Transfer-Encoding: chunked") + chunk(strings.Repeat("\x00", 1024)), http.StatusBadRequest, "invalid_body"},
			{"a body within import_max_bytes, without a token", head("", "Content-Length: 1048576") + "{", http.StatusUnauthorized, "unauthenticated"},
		} {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				resp, body, closed := f.rawExchange(c.raw)
				if resp.StatusCode != c.status || !strings.Contains(body, `"reason":"`+c.reason+`"`) {
					t.Errorf("%d %.300s, want %d %s", resp.StatusCode, body, c.status, c.reason)
				}
				if !closed {
					t.Error("the connection stays open with the rest of the body unread")
				}
			})
		}
		before := f.exportCensus()
		if got := f.do(request{method: http.MethodPost, target: "/v1/imports", token: root, body: string(export)}); got.status != http.StatusCreated {
			t.Fatalf("the import of alpha's export of %d bytes answered %d %s", len(export), got.status, got.body)
		}
		if f.exportCensus() == before {
			t.Error("the import wrote nothing")
		}
	})
}

// alphaExport is realm alpha's JSON export of claims whose evidence makes it larger than a
// few kilobytes, and alpha's realm key.
func alphaExport(t *testing.T, kind storage.Kind) ([]byte, string) {
	t.Helper()
	ctx := context.Background()
	alpha := protocol.New(storagetest.Open(t, kind), protocol.Options{Realm: "alpha"})
	alice := &protocol.Actor{Identity: "alpha:alice", Rights: protocol.Rights{protocol.RightRead: true, protocol.RightWrite: true}}
	sent, err := alpha.Send(ctx, alice, []byte(`{"kind":"ask","body":"Does the build pass?"}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		ref := strings.Repeat(strconv.Itoa(i), 2000)
		if _, err := alpha.Assert(ctx, alice, []byte(`{"thread":"`+sent.Thread.ID+`","statement":"the build passes, run `+strconv.Itoa(i)+`","evidence":[{"kind":"log","ref":"`+ref+`"}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := alpha.WriteExport(ctx, 0, "json", &buf); err != nil {
		t.Fatal(err)
	}
	key, err := alpha.RealmKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), key.DID()
}
