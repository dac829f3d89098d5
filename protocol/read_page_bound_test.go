package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// answerCap is the MCP answer cap (mcpserver.DefaultMaxAnswerBytes, which imports this
// package): one tool result's JSON.
const answerCap = 8 << 20

// The largest answer read_thread and claim_graph can give at the reference limits, computed
// from the limits with every text at its longest and of the character whose JSON is longest
// (U+2028, six bytes): a page is bounded by DefaultReadPageBytes (read_page.go) whatever the thread
// holds, since a claim's head and its first stance always fit an empty page (and a message
// does). Read whole, the same thread would be gigabytes, its messages alone most of the cap.
func TestLargestPageAtTheReferenceLimits(t *testing.T) {
	l := DefaultLimits()
	text := func(n int) string { return strings.Repeat("\u2028", n) }
	ptr := func(s string) *string { return &s }
	// An identity is a realm and a handle of at most 64 characters of [a-z0-9._-] each.
	identity, extension := strings.Repeat("r", 64)+":"+strings.Repeat("h", 64), text(l.ExtensionMaxChars)
	model, client := ptr(text(l.ProvenanceFieldMaxChars)), ptr(text(l.ProvenanceFieldMaxChars))
	items := make([]Evidence, l.EvidenceMaxItems)
	for i := range items {
		items[i] = Evidence{Kind: "reproducer", Ref: text(l.EvidenceRefMaxChars), Note: ptr(text(evidenceNoteMaxChars))}
	}
	document, err := json.Marshal(StanceDocument("attest", text(64), "cl_9223372036854775807", text(l.BodyMaxChars), identity, items, ptr(text(evidenceNoteMaxChars)), ptr(text(l.BodyMaxChars))))
	if err != nil {
		t.Fatal(err)
	}
	document = append(document[:len(document)-1], `,"proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","created":"2026-12-04T17:00:00.000000000Z","verificationMethod":"did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK#z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK","proofPurpose":"assertionMethod","proofValue":"`+strings.Repeat("z", 90)+`"}}`...)
	big := int64(1) << 62
	now := time.Now()
	stance := &storage.Stance{ID: big, ClaimID: big, Kind: storage.StanceRefute, Identity: identity, Extension: extension, AuthorKind: "agent",
		Evidence: encodeEvidence(items), Note: ptr(text(evidenceNoteMaxChars)), Body: ptr(text(l.BodyMaxChars)),
		ProvenanceModel: model, ProvenanceClient: client, CreatedAt: now, Proof: ptr(string(document))}
	maxStance, err := jsonSize(stanceView(stance))
	if err != nil {
		t.Fatal(err)
	}
	supersedes := make([]int64, l.EvidenceMaxItems)
	for i := range supersedes {
		supersedes[i] = big + int64(i)
	}
	claim := &storage.Claim{ID: big, ThreadID: big, AnchorID: big, Statement: text(l.BodyMaxChars), Identity: identity, Extension: extension,
		AuthorKind: "agent", State: "unverified", StateOrigin: "agent", Evidence: encodeEvidence(items), ValidUntil: &now, SupersededBy: &big,
		ProvenanceModel: model, ProvenanceClient: client, CreatedAt: now, UpdatedAt: now,
		OriginRealm: ptr(text(64)), OriginClaim: ptr(text(64)), OriginThread: ptr(text(64))}
	head := claimViews([]storage.Claim{*claim}, nil, map[int64][]int64{big: supersedes}, 1<<30, now)[0]
	head.Continued = true
	maxHead, err := jsonSize(head)
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]storage.Message, l.ThreadMaxMessages)
	for i := range msgs {
		msgs[i] = storage.Message{ID: big + int64(i), ThreadID: big, Kind: "answer", Identity: identity, Extension: extension, AuthorKind: "agent",
			Body: text(l.BodyMaxChars), ProvenanceModel: model, ProvenanceClient: client, CreatedAt: now}
	}
	maxMessages, err := jsonSize(messageTree(msgs, nil))
	if err != nil {
		t.Fatal(err)
	}
	maxThread, err := jsonSize(threadView(&storage.Thread{ID: big, Title: text(l.BodyMaxChars), Creator: identity,
		AwaitingIdentity: identity, AwaitingExtension: extension, StateConfirmedAt: &now, CreatedAt: now, UpdatedAt: now}))
	if err != nil {
		t.Fatal(err)
	}
	const envelope = 1024 // the keys of the answer and next_cursor
	if maxHead+maxStance > DefaultReadPageBytes {
		t.Fatalf("a claim's head (%d bytes) and a stance (%d) do not fit an empty page (%d)", maxHead, maxStance, DefaultReadPageBytes)
	}
	readThread := maxThread + DefaultReadPageBytes + envelope
	claimGraph := DefaultReadPageBytes + envelope
	whole := maxThread + maxMessages + l.ThreadMaxClaims*(maxHead+l.ClaimMaxStances*maxStance)
	t.Logf("at the reference limits: a stance %d bytes, a claim's head %d, the messages %d, the thread %d", maxStance, maxHead, maxMessages, maxThread)
	t.Logf("largest read_thread page %d bytes, claim_graph page %d, of the cap %d; the thread read whole %d", readThread, claimGraph, answerCap, whole)
	for name, n := range map[string]int{"read_thread": readThread, "claim_graph": claimGraph} {
		if n > answerCap*3/4 {
			t.Errorf("%s: a page may take %d bytes, over 3/4 of the answer cap %d", name, n, answerCap)
		}
	}
	if whole <= answerCap {
		t.Errorf("read whole, the thread (%d bytes) would fit the cap: the limits are not what this test is about", whole)
	}
}

// A graph document gets an eighth of a page of JSON (claim_graph.go); its markup and its
// escaping may make it several times larger. Here a page of the smallest nodes with the text
// that grows most in markup (quotes, angle brackets, ampersands), in each format and as MCP
// carries it (a JSON string), stays under 3/4 of the cap.
func TestLargestGraphDocumentPage(t *testing.T) {
	worst := strings.Repeat(`"<&`, 1)
	g := &graph.Graph{Nodes: []*graph.Node{}, Edges: []*graph.Edge{}}
	used := 0
	expired := false
	for i := 0; used < DefaultReadPageBytes/8; i++ {
		c := &graph.Node{ID: ClaimKey(int64(i + 1)), Type: graph.TypeClaim, Thread: "th_1", Statement: worst, State: "unverified",
			Certainty: "unverified", Expired: &expired, AssertedBy: worst, Grounded: graph.In, At: time.Now()}
		e := &graph.Edge{From: c.ID, To: "msg_1", Kind: graph.EdgeAnchoredIn}
		a, _ := jsonSize(c)
		b, _ := jsonSize(e)
		used += a + b
		g.Nodes, g.Edges = append(g.Nodes, c), append(g.Edges, e)
	}
	for _, name := range graph.FormatNames() {
		format, _ := graph.FormatByName(name)
		var buf bytes.Buffer
		if err := format.Write(&buf, g); err != nil {
			t.Fatal(err)
		}
		carried, _ := json.Marshal(buf.String())
		t.Logf("%s: %d bytes of JSON nodes make %d bytes as MCP carries the document", name, used, len(carried))
		if len(carried) > answerCap*3/4 {
			t.Errorf("%s: a document page may take %d bytes, over 3/4 of the cap", name, len(carried))
		}
	}
}
