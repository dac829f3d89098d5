package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// payload_too_large is decided before the body is parsed, whether the request declares its
// length or sends it chunked, and whether it stays below the largest body any route takes
// (artifact_max_bytes, so that artifacts fit) or goes beyond it.
func TestAPIPayloadTooLarge(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.RequestMaxBytes, limits.ArtifactMaxBytes = 1000, 4000
		f := newForum(t, db, limits)

		// envelope is an invalid envelope of exactly n bytes: refused as too large, or else as
		// invalid_body, never accepted.
		envelope := func(n int) string {
			head := `{"kind":"shout","body":"`
			return head + strings.Repeat("x", n-len(head)-2) + `"}`
		}
		for _, c := range []struct {
			name    string
			bytes   int
			chunked bool
			token   string
			want    protocol.Reason
		}{
			{"at the limit", 1000, false, f.alice, protocol.ReasonInvalidBody},
			{"at the limit, chunked", 1000, true, f.alice, protocol.ReasonInvalidBody},
			{"one byte over", 1001, false, f.alice, protocol.ReasonPayloadTooLarge},
			{"one byte over, chunked", 1001, true, f.alice, protocol.ReasonPayloadTooLarge},
			{"over, without a token", 3000, false, "", protocol.ReasonPayloadTooLarge},
			{"over, chunked, without a token", 3000, true, "", protocol.ReasonPayloadTooLarge},
			{"beyond what the server reads", 5000, false, f.alice, protocol.ReasonPayloadTooLarge},
			{"beyond what the server reads, chunked", 5000, true, f.alice, protocol.ReasonPayloadTooLarge},
		} {
			t.Run(c.name, func(t *testing.T) {
				got := f.do(request{method: http.MethodPost, target: "/v1/messages", token: c.token, body: envelope(c.bytes), chunked: c.chunked})
				wantRefusal(t, got, c.want)
			})
		}

		// Every route is held to the limit, a GET with a body too.
		got := f.do(request{method: http.MethodGet, target: "/v1/threads", token: f.alice, body: strings.Repeat(" ", 1001)})
		wantRefusal(t, got, protocol.ReasonPayloadTooLarge)
	})
}
