//go:build resources

package resources

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/benchdata"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web/password"
)

// The largest forum the limits allow (PROTOCOL.md § 8): one thread of thread_max_messages
// (1,000) messages holding thread_max_claims (200) claims of claim_max_stances (100)
// attestations each, every stance with a kilobyte of evidence (its JSON export is about 60 MB;
// the forum of the probe that found the unbounded exports, 24 MB), and an artifact of
// artifact_max_bytes; beside it a hundred threads of ten messages, the rest of the forum.
const (
	largestMessages = 1000
	largestClaims   = 200
	largestStances  = 100
	otherThreads    = 100
)

// forum is the seeded database and who may call on it.
type forum struct {
	kind storage.Kind
	db   *storage.DB // the test's own connection: seeding, and holding SQLite's write lock
	// serverURL is the database as parley serve reaches it: on Postgres through a proxy the
	// test can freeze.
	serverURL string
	proxy     *storagetest.Proxy

	thread, root, claim string // the largest thread, its opening ask, its first claim
	small, smallRoot    string // a thread of ten messages
	artifact            string // the ref of an artifact of artifact_max_bytes
	realmKey            *signed.Signer

	// secrets are the tokens of each kind of caller, as many as a case calls at once.
	secrets map[callerKind][]string
	// revocable are the ids of tokens made to be revoked on the pages, one per caller.
	revocable []int64
	// sessions are the pages' signed-in humans, made when first called (signIn).
	mu       sync.Mutex
	sessions map[callerKind]map[int]session
	imports  atomic.Int64 // the trusted realm's exports made so far
}

// callersPerKind is how many distinct callers of each kind a case may use at once.
const callersPerKind = 16

// thePassword is every human's password. The members and administrators store it at the
// least cost the server accepts, so that signing them in costs nothing; the accounts the
// password rows sign in to store Parley's own cost, which is what those rows measure.
const thePassword = "correct horse battery"

func seedForum(t *testing.T, kind storage.Kind) *forum {
	t.Helper()
	start := time.Now()
	ctx := context.Background()
	f := &forum{kind: kind, db: storagetest.Open(t, kind), secrets: map[callerKind][]string{}, sessions: map[callerKind]map[int]session{}}
	f.serverURL = f.db.URL()
	if kind == storage.Postgres {
		u, err := url.Parse(f.serverURL)
		if err != nil {
			t.Fatal(err)
		}
		f.proxy = storagetest.StartProxy(t, u.Host)
		u.Host = f.proxy.Addr()
		f.serverURL = u.String()
	}

	largest, err := benchdata.Seed(ctx, f.db, benchdata.Forum{Messages: largestMessages, ThreadSize: largestMessages})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := benchdata.Seed(ctx, f.db, benchdata.Forum{Messages: otherThreads * 10, ThreadSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	f.thread, f.root = f.threadAndRoot(t, largest.FirstThread)
	f.small, f.smallRoot = f.threadAndRoot(t, rest.FirstThread)

	seeded := time.Now()
	svc := protocol.New(f.db, protocol.Options{Limits: seedLimits()})
	f.seedClaims(t, svc)
	t.Logf("%s: messages seeded in %v, claims in %v", kind, seeded.Sub(start).Round(time.Millisecond), time.Since(seeded).Round(time.Millisecond))
	content := bytes.Repeat([]byte("listening on :8080\n"), protocol.DefaultLimits().ArtifactMaxBytes/19)
	info, err := svc.PutArtifact(ctx, agent("ainotes:archivist", "read,write"), content, "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	f.artifact = info.Ref
	if _, err := svc.CreateRoom(ctx, protocol.OperatorActor(), []byte(`{"name":"elsewhere","title":"Elsewhere"}`)); err != nil {
		t.Fatal(err)
	}
	f.realmKey = signed.NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'r'}, ed25519.SeedSize)))
	f.makeCallers(t)
	t.Logf("%s: the largest forum seeded in %v", kind, time.Since(start).Round(time.Millisecond))
	return f
}

// seedLimits lift the write rate for the seed's claimant, which writes 600 times at once.
func seedLimits() protocol.Limits {
	l := protocol.DefaultLimits()
	l.WritesPerMinute = 1 << 30
	return l
}

func agent(identity, rights string) *protocol.Actor {
	r, err := protocol.ParseRights(rights)
	if err != nil {
		panic(err)
	}
	return &protocol.Actor{Identity: identity, Rights: r}
}

func (f *forum) threadAndRoot(t *testing.T, id int64) (thread, root string) {
	t.Helper()
	var rootID int64
	if err := f.db.NewRaw("SELECT root_message_id FROM threads WHERE id = ?", id).Scan(context.Background(), &rootID); err != nil {
		t.Fatal(err)
	}
	return "th_" + strconv.FormatInt(id, 10), "msg_" + strconv.FormatInt(rootID, 10)
}

// seedClaims asserts the claims and their first attestations through the protocol, then copies
// the attestation of each claim, with its event, for the other attesters in one statement
// each: the copies are rows the protocol wrote, under other names, their events changing the
// claim's state from what the first left to the same (supported), as the protocol's own
// attestations after the first do. Sent one by one, the 20,000 stances took minutes.
func (f *forum) seedClaims(t *testing.T, svc *protocol.Service) {
	t.Helper()
	ctx := context.Background()
	claimant := agent("ainotes:claimant", "read,write")
	evidence := func(n, size int, tag string) []any {
		items := make([]any, n)
		for i := range items {
			items[i] = map[string]any{"kind": "url", "ref": "https://example.org/" + tag + "/" + strconv.Itoa(i) + "/" + strings.Repeat("e", size)}
		}
		return items
	}
	for c := range largestClaims {
		raw, _ := json.Marshal(map[string]any{
			"thread": f.thread, "parent": f.root,
			"statement": fmt.Sprintf("Claim %d: %s", c, strings.Repeat("the limit holds as the manifest says ", 12)),
			"evidence":  evidence(4, 240, "claim"+strconv.Itoa(c)),
		})
		res, err := svc.Assert(ctx, claimant, raw)
		if err != nil {
			t.Fatalf("claim %d: %v", c, err)
		}
		if c == 0 {
			f.claim = res.Claim.ID
		}
		raw, _ = json.Marshal(map[string]any{"claim": res.Claim.ID, "evidence": evidence(1, 960, "seen")})
		if _, err := svc.Attest(ctx, agent(benchdata.Agent("ainotes", 1), "read,write"), raw); err != nil {
			t.Fatalf("the attestation of claim %d: %v", c, err)
		}
	}
	var base int64
	if err := f.db.NewRaw("SELECT MAX(id) FROM claim_stances").Scan(ctx, &base); err != nil {
		t.Fatal(err)
	}
	pattern := benchdata.Agent("ainotes", 1)
	// The pattern's events are read first, 200 rows, so that the copies join them by claim
	// (events.stance_id has no index); ANALYZE between lets the planner see the copies.
	for _, step := range []struct {
		stmt string
		args []any
	}{
		{`WITH RECURSIVE series (n) AS (SELECT 2 UNION ALL SELECT n + 1 FROM series WHERE n < ?)
		INSERT INTO claim_stances (claim_id, kind, identity, extension, author_kind, evidence, note, body,
			provenance_model, provenance_client, created_at)
		SELECT s.claim_id, s.kind, 'ainotes:agent-' || series.n, s.extension, s.author_kind, s.evidence, s.note, s.body,
			s.provenance_model, s.provenance_client, s.created_at
		FROM claim_stances s CROSS JOIN series WHERE s.identity = ? ORDER BY s.claim_id, series.n`, []any{largestStances, pattern}},
		{"ANALYZE", nil},
		{`WITH pattern AS (
			SELECT p.claim_id, p.identity AS pattern_identity, e.thread_id, e.subject, e.act, e.to_state, e.origin,
				e.actor_extension, e.label, e.message_id, e.confirmed, e.confirmed_at, e.confirms_event_id,
				e.cause_claim_id, e.at, e.room_id
			FROM claim_stances p JOIN events e ON e.stance_id = p.id WHERE p.identity = ?)
		INSERT INTO events (thread_id, subject, act, from_state, to_state, origin, actor_identity, actor_extension,
			label, message_id, confirmed, confirmed_at, confirms_event_id, stance_id, cause_claim_id, at, room_id)
		SELECT e.thread_id, e.subject, e.act, e.to_state, e.to_state, e.origin, s.identity, e.actor_extension,
			REPLACE(e.label, e.pattern_identity, s.identity), e.message_id, e.confirmed, e.confirmed_at, e.confirms_event_id,
			s.id, e.cause_claim_id, e.at, e.room_id
		FROM claim_stances s JOIN pattern e ON e.claim_id = s.claim_id
		WHERE s.id > ? ORDER BY s.id`, []any{pattern, base}},
	} {
		if _, err := f.db.ExecContext(ctx, step.stmt, step.args...); err != nil {
			t.Fatalf("copying the attestations: %v", err)
		}
	}
	if _, err := f.db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	var stances int
	if err := f.db.NewRaw("SELECT COUNT(*) FROM claim_stances").Scan(ctx, &stances); err != nil {
		t.Fatal(err)
	}
	if stances != largestClaims*largestStances {
		t.Fatalf("the largest thread has %d stances, want %d", stances, largestClaims*largestStances)
	}
}

// makeCallers stores the tokens and the accounts of every kind of caller.
func (f *forum) makeCallers(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	cheap := cheapHash()
	dear, err := password.Hash(thePassword)
	if err != nil {
		t.Fatal(err)
	}
	for i := range callersPerKind {
		n := strconv.Itoa(i)
		for _, user := range []struct {
			name  string
			hash  string
			admin bool
		}{{"member-" + n, cheap, false}, {"admin-" + n, cheap, true}, {"leaver-" + n, cheap, false}, {"login-" + n, dear, false}} {
			create := f.db.CreateUser
			if user.admin {
				create = f.db.CreateAdmin
			}
			if _, err := create(ctx, user.name, user.hash); err != nil {
				t.Fatal(err)
			}
		}
		for kind, tok := range map[callerKind]storage.NewToken{
			reader:   {Identity: "ainotes:reader-" + n, Rights: "read"},
			writer:   {Identity: "ainotes:writer-" + n, Rights: "read,write"},
			locker:   {Identity: "ainotes:locker-" + n, Rights: "read,write,lock"},
			verifier: {Identity: "ainotes:verifier-" + n, Rights: "read,write,verify"},
			human:    {Identity: "human:member-" + n, Human: true, Rights: "read,write,lock,verify"},
			admin:    {Identity: "human:admin-" + n, Human: true, Rights: "read,write,lock,verify"},
		} {
			secret, err := protocol.NewTokenSecret()
			if err != nil {
				t.Fatal(err)
			}
			tok.SecretHash = protocol.HashTokenSecret(secret)
			if _, err := f.db.CreateToken(ctx, tok); err != nil {
				t.Fatal(err)
			}
			f.secrets[kind] = append(f.secrets[kind], secret)
		}
		secret, err := protocol.NewTokenSecret()
		if err != nil {
			t.Fatal(err)
		}
		tok, err := f.db.CreateToken(ctx, storage.NewToken{Identity: "ainotes:revocable-" + n, Rights: "read", SecretHash: protocol.HashTokenSecret(secret)})
		if err != nil {
			t.Fatal(err)
		}
		f.revocable = append(f.revocable, tok.ID)
	}
}

// cheapHash is thePassword at the least cost password.Verify accepts (8 KiB, one pass).
func cheapHash() string {
	salt := []byte("parley test salt")
	key := argon2.IDKey([]byte(thePassword), salt, 1, 8, 1, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=19$m=8,t=1,p=1$%s$%s", b64.EncodeToString(salt), b64.EncodeToString(key))
}

// trustedExport is an export of the trusted realm holding one claim not imported before,
// signed by its realm key: what POST /v1/imports takes.
func (f *forum) trustedExport() []byte {
	n := f.imports.Add(1)
	doc, _ := json.Marshal(map[string]any{
		"parley": "1", "exported_at": "2026-12-01T10:00:00Z", "nodes": []any{}, "edges": []any{},
		"threads":  []any{map[string]any{"id": "th_1", "title": "A thread of the trusted realm"}},
		"messages": []any{}, "events": []any{},
		"claims": []any{map[string]any{
			"id": fmt.Sprintf("cl_%d", n), "thread": "th_1", "statement": fmt.Sprintf("Claim %d of the trusted realm.", n),
			"asserted_by":  map[string]any{"identity": trustedRealm + ":ann", "extension": ""},
			"evidence":     []any{map[string]any{"kind": "note", "ref": "matrix"}},
			"attestations": []any{}, "refutations": []any{}, "verifications": []any{},
			"created_at": "2026-12-01T10:00:00Z",
		}},
		"realm": trustedRealm, "realm_key": f.realmKey.DID(), "keys": []any{},
	})
	out, err := f.realmKey.Sign(doc, time.Now())
	if err != nil {
		panic(err)
	}
	return out
}

// trustedRealm is the other realm whose exports the server takes (--trust-realm).
const trustedRealm = "matrix-alpha"
