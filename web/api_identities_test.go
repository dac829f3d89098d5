package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// identityParityCases are § 17's identity_read in the parity of the transports.
func identityParityCases() []parityCase {
	answered := func(f *forum, th, _ string) {
		f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
	}
	return []parityCase{
		{name: "an identity's record", as: "reader", prepare: answered, tool: "identity_read", args: `{"identity":"ainotes:bob"}`, want: "ok"},
		{name: "an identity nobody knows", as: "reader", tool: "identity_read", args: `{"identity":"ainotes:nobody"}`, want: "not_found"},
		{name: "an identity of no form", as: "reader", tool: "identity_read", args: `{"identity":"Bob"}`, want: "invalid_body"},
	}
}

// GET /v1/identities/{identity} answers the record and the scores of § 17, the identity in
// the path with its colon as it is or escaped; GET /v1/identities ranks, a page at a time;
// the manifest names the policy apart from the profiles.
func TestIdentitiesOverHTTP(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newForum(t, db, protocol.DefaultLimits())
		th, _ := f.ask(f.alice, "Which port?")
		f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"8080."}`)
		f.must(f.post("/v1/threads/"+th+"/confirm", f.mod, ""), http.StatusOK)
		th2, _ := f.ask(f.alice, "Which host?")
		f.send(f.bob, `{"kind":"answer","thread":"`+th2+`","body":"localhost."}`)
		f.must(f.post("/v1/threads/"+th2+"/mark", f.human, `{"state":"open"}`), http.StatusOK)

		for _, path := range []string{"/v1/identities/ainotes:bob", "/v1/identities/ainotes%3Abob"} {
			r := f.must(f.get(path, f.reader), http.StatusOK)
			rec := r.json["record"].(map[string]any)
			proposals := rec["proposals"].(map[string]any)
			if proposals["confirmed"] != 1.0 || proposals["corrected"] != 1.0 || proposals["open"] != 0.0 {
				t.Errorf("%s: proposals %v, want one confirmed and one corrected", path, proposals)
			}
			if msgs := rec["messages"].(map[string]any); msgs["answer"] != 2.0 || msgs["ask"] != 0.0 {
				t.Errorf("%s: messages %v", path, msgs)
			}
			policy := r.json["policy"].(map[string]any)
			scores := policy["scores"].(map[string]any)
			if policy["name"] != "parley-evidence-1" || scores["evidence"] != 2.0 || scores["reliability"] == nil {
				t.Errorf("%s: policy %v", path, policy)
			}
			if r.at("identity") != "ainotes:bob" || r.at("author_kind") != "llm" || r.at("realm") != "ainotes" || r.at("first_seen") == "" {
				t.Errorf("%s: %s", path, r.body)
			}
		}
		if r := f.get("/v1/identities/human:ann", f.reader); r.status != http.StatusOK || r.at("author_kind") != "human" {
			t.Errorf("a human: %d %s", r.status, r.body)
		}
		// A token that has done nothing yet is known; a name nobody holds is not.
		if r := f.get("/v1/identities/ainotes:reader", f.reader); r.status != http.StatusOK || r.json["first_seen"] != nil {
			t.Errorf("an identity that only holds a token: %d %s", r.status, r.body)
		}
		for target, want := range map[string]string{
			"/v1/identities/ainotes:nobody":        "not_found",
			"/v1/identities/Bob":                   "invalid_body",
			"/v1/identities?order=votes":           "invalid_body",
			"/v1/identities?cursor=nonsense":       "invalid_body",
			"/v1/identities/ainotes:bob?extra=1":   "invalid_body",
			"/v1/identities?order=activity&x=true": "invalid_body",
		} {
			if r := f.get(target, f.reader); r.reason() != want {
				t.Errorf("%s: %d %s, want %s", target, r.status, r.body, want)
			}
		}
		if r := f.get("/v1/identities/ainotes:bob", ""); r.status != http.StatusUnauthorized {
			t.Errorf("without a token: %d", r.status)
		}

		// The ranking: bob (evidence 2) before those without evidence, one at a time.
		var seen []string
		cursor := ""
		for page := 0; page < 10; page++ {
			q := url.Values{"order": {"reliability"}, "limit": {"1"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			r := f.must(f.get("/v1/identities?"+q.Encode(), f.reader), http.StatusOK)
			for _, v := range r.json["identities"].([]any) {
				seen = append(seen, v.(map[string]any)["identity"].(string))
			}
			if r.json["more"] != true {
				break
			}
			cursor = r.at("cursor")
		}
		if len(seen) != 4 || seen[0] != "ainotes:bob" {
			t.Errorf("ranked %v, want ainotes:bob first of 4 that acted", seen)
		}
		act := f.must(f.get("/v1/identities?order=activity", f.reader), http.StatusOK)
		if first := act.json["identities"].([]any)[0].(map[string]any)["identity"]; first != "human:ann" {
			t.Errorf("by activity, %v is first, want human:ann (the last to act)", first)
		}

		m := f.must(f.get("/v1/manifest", ""), http.StatusOK)
		policies, _ := m.json["policies"].([]any)
		if len(policies) != 1 || policies[0].(map[string]any)["name"] != "reputation" || policies[0].(map[string]any)["version"] != "parley-evidence-1" {
			t.Errorf("manifest policies %v", m.json["policies"])
		}
		for _, p := range m.json["profiles"].([]any) {
			if p.(map[string]any)["name"] == "reputation" {
				t.Errorf("the policy is listed among the profiles")
			}
		}
	})
}

// tools/list with every tool the server has, identity_read among them, stays within 12,000
// bytes (see TestToolsListIsSmall in mcpserver).
func TestToolsListWithEveryTool(t *testing.T) {
	f := newForum(t, storagetest.Open(t, storage.SQLite), protocol.DefaultLimits())
	req, _ := http.NewRequest(http.MethodPost, f.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	t.Logf("tools/list: %d bytes", len(body))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"identity_read"`) {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	if len(body) > 12000 {
		t.Errorf("tools/list is %d bytes, over 12000", len(body))
	}
}
