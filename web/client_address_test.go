package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func TestRealClient(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, tc := range []struct {
		name      string
		peer      string
		forwarded []string
		want      string
	}{
		{name: "no proxy", peer: "203.0.113.9", want: "203.0.113.9"},
		{name: "an untrusted peer's header is ignored", peer: "203.0.113.9", forwarded: []string{"198.51.100.1"}, want: "203.0.113.9"},
		{name: "a trusted proxy", peer: "10.0.0.2", forwarded: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "two trusted proxies", peer: "10.0.0.2", forwarded: []string{"198.51.100.1, 10.0.0.7"}, want: "198.51.100.1"},
		{name: "a forged entry left of the real client", peer: "10.0.0.2", forwarded: []string{"192.0.2.66, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "the header given twice", peer: "::1", forwarded: []string{"198.51.100.1", "10.1.1.1"}, want: "198.51.100.1"},
		{name: "IPv6 client", peer: "10.0.0.2", forwarded: []string{"2001:db8::5"}, want: "2001:db8::5"},
		{name: "only trusted hops", peer: "10.0.0.2", forwarded: []string{"10.0.0.3"}, want: "10.0.0.3"},
		{name: "garbage stops the walk", peer: "10.0.0.2", forwarded: []string{"evil, 10.0.0.3"}, want: "10.0.0.3"},
		{name: "trusted peer, no header", peer: "10.0.0.2", want: "10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr [][]byte
			for _, f := range tc.forwarded {
				hdr = append(hdr, []byte(f))
			}
			got := realClient(netip.MustParseAddr(tc.peer), hdr, proxies)
			if got.String() != tc.want {
				t.Errorf("client %s, want %s", got, tc.want)
			}
		})
	}
}

// Behind a trusted proxy the app New builds sees the client's address and scheme; from anyone
// else the X-Forwarded-* headers change nothing. (app.Test's connections come from 0.0.0.0.)
func TestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		trusted                []netip.Prefix
		wantAddress, wantProto string
	}{
		{name: "trusted", trusted: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")}, wantAddress: "198.51.100.1", wantProto: "https"},
		{name: "untrusted", trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, wantAddress: "0.0.0.0", wantProto: "http"},
		{name: "none configured", wantAddress: "0.0.0.0", wantProto: "http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := New(Options{DB: storagetest.Open(t, storage.SQLite), TrustedProxies: tc.trusted,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			app.Get("/seen-as", func(c *fiber.Ctx) error { return c.SendString(clientAddress(c) + " " + c.Protocol()) })
			req := httptest.NewRequest(http.MethodGet, "/seen-as", nil)
			req.Header.Set("X-Forwarded-For", "198.51.100.1")
			req.Header.Set("X-Forwarded-Proto", "https")
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if body, want := string(raw), tc.wantAddress+" "+tc.wantProto; body != want {
				t.Errorf("seen as %q, want %q", body, want)
			}
		})
	}
}
