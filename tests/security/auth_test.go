package security

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// Failed authentications are limited per client address (docs/reliability.md), over HTTP
// and MCP, which share one count: after failed_auths_per_minute failures, every request of
// that address that carries a token — a good one too — is rate_limited with retry_after,
// while another address is not held back. No answer shows a token, its hash or SQL.
func TestFailedAuthenticationsAreLimitedPerClient(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := relaxedLimits()
		limits.FailedAuthsPerMinute = 6
		s := newServer(t, db, limits)
		c := newCast(s)
		leaks := newLeakScanner(t, s)
		good := c.authorization["writer"]
		bad := []string{c.authorization["malformed token"], c.authorization["revoked token"], "Bearer parley_guessed"}

		first := &address{s: s, local: "127.0.0.1"}
		other := &address{s: s, local: "127.0.0.2"}
		for _, authorization := range bad {
			for _, transport := range []string{"HTTP", "MCP"} {
				got := first.listThreads(t, transport, authorization)
				leaks.check(t, "a failed authentication over "+transport, got.raw)
				if got.outcome != "unauthenticated" {
					t.Fatalf("failure %s over %s: %s, want unauthenticated", authorization, transport, got)
				}
			}
		}
		for _, authorization := range []string{good, bad[2]} {
			for _, transport := range []string{"HTTP", "MCP"} {
				got := first.listThreads(t, transport, authorization)
				leaks.check(t, "a limited authentication over "+transport, got.raw)
				if got.outcome != "rate_limited" || got.status != http.StatusTooManyRequests || !strings.Contains(string(got.raw), `"retry_after":`) {
					t.Errorf("after 6 failures, over %s: %s, want rate_limited with retry_after", transport, got)
				}
				if transport == "HTTP" && got.retryAfter == "" {
					t.Errorf("after 6 failures, over HTTP: no Retry-After header")
				}
			}
		}
		// Another client is not held back, and counts its own failures.
		for _, transport := range []string{"HTTP", "MCP"} {
			if got := other.listThreads(t, transport, good); got.outcome != "ok" {
				t.Errorf("another address with a good token over %s: %s, want ok", transport, got)
			}
			if got := other.listThreads(t, transport, bad[2]); got.outcome != "unauthenticated" {
				t.Errorf("another address with a bad token over %s: %s, want unauthenticated", transport, got)
			}
		}
		// Nothing is authenticated without a token: the manifest still answers.
		if resp, raw := first.do(t, http.MethodGet, "/v1/manifest", "", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("the manifest without a token from a limited address: %d %s", resp.StatusCode, raw)
		}
	})
}

// address is a client that connects from one loopback address of its own.
type address struct {
	s     *server
	local string
}

type limitedAnswer struct {
	answer
	retryAfter string
}

func (a *address) listThreads(t *testing.T, transport, authorization string) limitedAnswer {
	t.Helper()
	if transport == "MCP" {
		resp, raw := a.do(t, http.MethodPost, "/mcp", authorization,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_threads","arguments":{}}}`))
		return limitedAnswer{overMCP(resp, raw), ""}
	}
	resp, raw := a.do(t, http.MethodGet, "/v1/threads", authorization, nil)
	return limitedAnswer{overHTTP(resp, raw), resp.Header.Get("Retry-After")}
}

func (a *address) do(t *testing.T, method, target, authorization string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a.local)}}
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
	}}
	if body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequest(method, a.s.base+target, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s from %s: %v", method, target, a.local, err)
	}
	defer resp.Body.Close()
	c.CloseIdleConnections()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}
