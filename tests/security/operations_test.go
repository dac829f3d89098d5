package security

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parleyforum/parley/signed"
)

// operation is one operation of § 10: its MCP tool and its HTTP route, the right it needs,
// and how its input is made for a prepared thread.
type operation struct {
	name string
	tool string // "" when only HTTP serves it
	// method and path of the HTTP route; :thread, :claim and :ref take the input's field of
	// that name, the other fields go in the query (GET) or the JSON body.
	method, path string
	needs        string
	onThread     bool   // its subject is the case's thread, or the thread's claim
	writes       bool   // it changes the thread or its claims when accepted
	kind         string // the kind it sends, for send
	// moderation is "hide" or "unhide" for § 18's operations on a message of the case's
	// thread, and message names the message they take: "visible" (the thread's root) or
	// "hidden" (a note hidden when the thread was prepared).
	moderation, message string
	// input is the operation's input for thread f, as caller speaks (from.extension where
	// the operation takes one).
	input func(f fixture, extension string) map[string]any
}

// markAs and claimMarkAs are the states the matrix's marks set.
const (
	markAs      = "open"
	claimMarkAs = "unverified"
)

func from(extension string, m map[string]any) map[string]any {
	if extension != "" {
		m["from"] = map[string]any{"extension": extension}
	}
	return m
}

func evidence(ref string) []any { return []any{map[string]any{"kind": "note", "ref": ref}} }

// kinds are the nine kinds of § 3, each an operation of the matrix.
var kinds = []string{"ask", "answer", "note", "decide", "close", "defer", "reject", "obsolete", "reopen"}

// operations are every operation of § 10 and § 12–13 on a thread; standalone are those
// without one (their outcome depends on the caller alone).
func operations() (onThread, standalone []operation) {
	for _, k := range kinds {
		k := k
		onThread = append(onThread, operation{name: "send " + k, tool: "send", method: http.MethodPost, path: "/v1/messages",
			needs: needWrite, onThread: true, writes: true, kind: k,
			input: func(f fixture, ext string) map[string]any {
				return from(ext, map[string]any{"kind": k, "thread": f.thread, "body": "A " + k + " of the matrix."})
			}})
	}
	thread := func(f fixture, _ string) map[string]any { return map[string]any{"thread": f.thread} }
	claim := func(f fixture, _ string) map[string]any { return map[string]any{"claim": f.claim} }
	onThread = append(onThread,
		operation{name: "confirm", tool: "confirm", method: http.MethodPost, path: "/v1/threads/:thread/confirm",
			needs: needLock, onThread: true, writes: true, input: thread},
		operation{name: "mark", tool: "mark", method: http.MethodPost, path: "/v1/threads/:thread/mark",
			needs: needHuman, onThread: true, writes: true,
			input: func(f fixture, _ string) map[string]any { return map[string]any{"thread": f.thread, "state": markAs} }},
		operation{name: "read_thread", tool: "read_thread", method: http.MethodGet, path: "/v1/threads/:thread",
			needs: needRead, onThread: true, input: thread},
		operation{name: "read_events", tool: "read_events", method: http.MethodGet, path: "/v1/threads/:thread/events",
			needs: needRead, onThread: true, input: thread},
		operation{name: "claim_assert", tool: "claim_assert", method: http.MethodPost, path: "/v1/claims",
			needs: needWrite, onThread: true, writes: true,
			input: func(f fixture, ext string) map[string]any {
				return from(ext, map[string]any{"thread": f.thread, "statement": "The matrix asserts.", "evidence": evidence("a test")})
			}},
		operation{name: "claim_attest", tool: "claim_attest", method: http.MethodPost, path: "/v1/claims/:claim/attest",
			needs: needWrite, onThread: true, writes: true,
			input: func(f fixture, ext string) map[string]any {
				return from(ext, map[string]any{"claim": f.claim, "evidence": evidence("seen too")})
			}},
		operation{name: "claim_refute", tool: "claim_refute", method: http.MethodPost, path: "/v1/claims/:claim/refute",
			needs: needWrite, onThread: true, writes: true,
			input: func(f fixture, ext string) map[string]any {
				return from(ext, map[string]any{"claim": f.claim, "evidence": evidence("port 9090 in the log"), "body": "It listens on 9090."})
			}},
		operation{name: "claim_verify", tool: "claim_verify", method: http.MethodPost, path: "/v1/claims/:claim/verify",
			needs: needVerify, onThread: true, writes: true,
			input: func(f fixture, ext string) map[string]any { return from(ext, map[string]any{"claim": f.claim}) }},
		operation{name: "claim mark", method: http.MethodPost, path: "/v1/claims/:claim/mark",
			needs: needHuman, onThread: true, writes: true,
			input: func(f fixture, _ string) map[string]any {
				return map[string]any{"claim": f.claim, "state": claimMarkAs}
			}},
		operation{name: "claim_read", tool: "claim_read", method: http.MethodGet, path: "/v1/claims/:claim",
			needs: needRead, onThread: true, input: claim},
		operation{name: "claim_graph", tool: "claim_graph", method: http.MethodGet, path: "/v1/graph",
			needs: needRead, onThread: true, input: thread},
		// § 16: the matrix moves a thread into the room it is in (general), which writes
		// nothing; test/security's TestRoomOperations moves threads for real.
		operation{name: "thread_move", tool: "thread_move", method: http.MethodPost, path: "/v1/threads/:thread/move",
			needs: needHuman, onThread: true,
			input: func(f fixture, _ string) map[string]any { return map[string]any{"thread": f.thread, "room": "general"} }},
	)
	// § 18: hiding a visible message and unhiding a hidden one are accepted (each on a fresh
	// thread, so that the shared one keeps its messages as they are); hiding a hidden one and
	// unhiding a visible one are invalid_transition.
	for _, m := range []struct{ moderation, message, name string }{
		{"hide", "visible", "message_hide"},
		{"hide", "hidden", "message_hide (already hidden)"},
		{"unhide", "hidden", "message_unhide"},
		{"unhide", "visible", "message_unhide (visible)"},
	} {
		m := m
		onThread = append(onThread, operation{name: m.name, tool: "message_" + m.moderation, method: http.MethodPost,
			path: "/v1/messages/:message/" + m.moderation, needs: needLock, onThread: true,
			writes:     (m.moderation == "hide") == (m.message == "visible"),
			moderation: m.moderation, message: m.message,
			input: func(f fixture, _ string) map[string]any {
				in := map[string]any{"message": f.root}
				if m.message == "hidden" {
					in["message"] = f.hidden
				}
				if m.moderation == "hide" {
					in["reason"] = "Withdrawn by the matrix."
				}
				return in
			}})
	}
	none := func(fixture, string) map[string]any { return map[string]any{} }
	standalone = []operation{
		{name: "get_manifest", tool: "get_manifest", method: http.MethodGet, path: "/v1/manifest", needs: public, input: none},
		{name: "list_threads", tool: "list_threads", method: http.MethodGet, path: "/v1/threads", needs: needRead,
			input: func(fixture, string) map[string]any { return map[string]any{"state": "open", "limit": 5} }},
		{name: "inbox", tool: "inbox", method: http.MethodGet, path: "/v1/inbox", needs: needRead, input: none},
		{name: "search", tool: "search", method: http.MethodGet, path: "/v1/search", needs: needRead,
			input: func(fixture, string) map[string]any { return map[string]any{"q": "port"} }},
		{name: "artifact_put", tool: "artifact_put", method: http.MethodPut, path: "/v1/artifacts", needs: needWrite,
			input: func(fixture, string) map[string]any {
				return map[string]any{"content_base64": base64.StdEncoding.EncodeToString(artifact), "media_type": "text/plain"}
			}},
		{name: "artifact_get", tool: "artifact_get", method: http.MethodGet, path: "/v1/artifacts/:ref", needs: needRead,
			input: func(fixture, string) map[string]any { return map[string]any{"ref": storedArtifact} }},
		{name: "key_register", tool: "key_register", method: http.MethodPut, path: "/v1/keys", needs: needWrite,
			input: func(fixture, string) map[string]any { return map[string]any{"public_key": newPublicKey()} }},
		{name: "list keys", method: http.MethodGet, path: "/v1/keys", needs: needRead,
			input: func(fixture, string) map[string]any { return map[string]any{"identity": creatorIdentity} }},
		{name: "feed", method: http.MethodGet, path: "/v1/feed", needs: needRead, input: none},
		// § 15: the dataset, and the schema of one of its line types (public, as the manifest).
		{name: "export", method: http.MethodGet, path: "/v1/export", needs: needRead,
			input: func(fixture, string) map[string]any { return map[string]any{"format": "jsonl"} }},
		{name: "schema", method: http.MethodGet, path: "/v1/schema/:type.json", needs: public,
			input: func(fixture, string) map[string]any { return map[string]any{"type": "message"} }},
		{name: "identity_read", tool: "identity_read", method: http.MethodGet, path: "/v1/identities/:identity", needs: needRead,
			input: func(fixture, string) map[string]any { return map[string]any{"identity": creatorIdentity} }},
		{name: "list_rooms", tool: "list_rooms", method: http.MethodGet, path: "/v1/rooms", needs: needRead, input: none},
		{name: "create room", method: http.MethodPost, path: "/v1/rooms", needs: needAdmin, writes: true,
			input: func(fixture, string) map[string]any {
				return map[string]any{"name": fmt.Sprintf("matrix-%d", roomsMade.Add(1)), "title": "A room of the matrix"}
			}},
		{name: "update room", method: http.MethodPatch, path: "/v1/rooms/:room", needs: needAdmin, writes: true,
			input: func(fixture, string) map[string]any {
				return map[string]any{"room": otherRoom, "description": "Described by the matrix."}
			}},
		// § 14: another realm's export, signed by the realm key the server trusts; each call
		// brings a claim of its own, so an accepted one writes.
		{name: "import", method: http.MethodPost, path: "/v1/imports", needs: needAdmin, writes: true,
			input: func(fixture, string) map[string]any { return trustedExport() }},
	}
	return onThread, standalone
}

// roomsMade names the rooms the matrix creates; otherRoom is the room of the caller scoped to
// another room than the cases' threads, which are in general.
var roomsMade atomic.Int64

const otherRoom = "elsewhere"

// artifact is what artifact_put stores; storedArtifact is its ref, sha256:<hex> of its bytes
// (§ 13). The matrix stores it before any case reads it.
var (
	artifact       = []byte("listening on :8080\n")
	artifactSum    = sha256.Sum256(artifact)
	storedArtifact = "sha256:" + hex.EncodeToString(artifactSum[:])
)

// trustedRealm is the other realm whose exports the matrix's server trusts (newServer), and
// trustedRealmKey its realm key.
const trustedRealm = "matrix-alpha"

var (
	trustedRealmKey = signed.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'m'}, ed25519.SeedSize)))
	exportsMade     atomic.Int64
)

// trustedExport is a JSON export of the trusted realm holding one claim not exported before,
// with the realm key's proof.
func trustedExport() map[string]any {
	n := exportsMade.Add(1)
	doc, _ := json.Marshal(map[string]any{
		"parley": "1", "exported_at": "2026-12-01T10:00:00Z", "nodes": []any{}, "edges": []any{},
		"threads":  []any{map[string]any{"id": "th_1", "title": "A thread of the trusted realm"}},
		"messages": []any{}, "events": []any{},
		"claims": []any{map[string]any{
			"id": fmt.Sprintf("cl_%d", n), "thread": "th_1", "statement": fmt.Sprintf("Claim %d of the trusted realm.", n),
			"asserted_by": map[string]any{"identity": trustedRealm + ":ann", "extension": ""},
			"evidence":    evidence("matrix"), "attestations": []any{}, "refutations": []any{}, "verifications": []any{},
			"created_at": "2026-12-01T10:00:00Z",
		}},
		"realm": trustedRealm, "realm_key": trustedRealmKey.DID(), "keys": []any{},
	})
	signedDoc, err := trustedRealmKey.Sign(doc, time.Now())
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(signedDoc, &out); err != nil {
		panic(err)
	}
	return out
}

func newPublicKey() string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(pub)
}

// httpRequest is the route's request for input: the path's fields in the path, the rest in
// the query or the body. artifact_put sends the artifact's bytes as the body itself.
func (op operation) httpRequest(input map[string]any) (target, contentType string, body []byte) {
	path := op.path
	rest := map[string]any{}
	for k, v := range input {
		if strings.Contains(path, ":"+k) {
			path = strings.Replace(path, ":"+k, url.PathEscape(v.(string)), 1)
			continue
		}
		rest[k] = v
	}
	switch {
	case op.name == "artifact_put":
		raw, err := base64.StdEncoding.DecodeString(rest["content_base64"].(string))
		if err != nil {
			panic(err)
		}
		return path, rest["media_type"].(string), raw
	case op.method == http.MethodGet:
		q := url.Values{}
		keys := make([]string, 0, len(rest))
		for k := range rest {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			q.Set(k, fmt.Sprint(rest[k]))
		}
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		return path, "", nil
	default:
		raw, err := json.Marshal(rest)
		if err != nil {
			panic(err)
		}
		return path, "application/json", raw
	}
}
