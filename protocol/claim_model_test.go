package protocol_test

import (
	"context"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestClaimModel checks the claim operations against a reference model of PROTOCOL.md § 12
// written from the text alone: it calls none of the package's rules (ClaimNext,
// CheckSelfAttestation, CheckOncePerIdentity, CheckSupersedeAuthority, CanVerify,
// MarkingOf). Random sequences of assert (superseding or not), attest, refute, verify and
// mark, by agents with and without write and verify, a lock holder, a human and no token,
// on a thread that a human closes and reopens now and then, run on both databases and with
// verify_quorum 1 and 2. After every step the model and the Service agree on the decision
// (accepted, or refused and why) and on every claim of the thread: state, origin,
// confirmation, superseded_by, supersedes and the stances on it. When the test ends, every
// claim's events replay to its state (newService).
func TestClaimModel(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, quorum := range []int{1, 2} {
			t.Run(fmt.Sprintf("quorum %d", quorum), func(t *testing.T) {
				limits := generous()
				limits.VerifyQuorum = quorum
				svc := newService(t, db, limits)
				rapid.Check(t, func(rt *rapid.T) {
					m := newClaimModel(rt, svc, quorum)
					for range rapid.IntRange(1, 25).Draw(rt, "steps") {
						m.step()
						m.compare()
					}
				})
			})
		}
	})
}

// The model's actors: what the text says each may do.
type claimRefActor struct {
	name, identity             string
	write, verify, lock, human bool
}

var claimRefActors = []claimRefActor{
	{name: "nobody"},
	{name: "reader", identity: "ainotes:reader"},
	{name: "alice", identity: "ainotes:alice", write: true}, // opens the thread: its creator
	{name: "bob", identity: "ainotes:bob", write: true},
	{name: "vera", identity: "ainotes:vera", write: true, verify: true},
	{name: "vic", identity: "ainotes:vic", verify: true},
	{name: "mod", identity: "ainotes:mod", write: true, lock: true},
	{name: "ada", identity: "human:ada", write: true, verify: true, lock: true, human: true},
}

// claimRef is the model of one claim.
type claimRef struct {
	id           string
	asserter     string
	state        string
	origin       string
	confirmed    bool
	supersededBy string
	supersedes   []string
	attesters    []string
	verifiers    []string
	refutations  int
}

type claimModel struct {
	rt     *rapid.T
	svc    *protocol.Service
	quorum int
	thread string
	locked bool
	claims []*claimRef
}

func newClaimModel(rt *rapid.T, svc *protocol.Service, quorum int) *claimModel {
	res, err := svc.Send(context.Background(), claimActors["alice"], []byte(`{"kind":"ask","body":"Which port?"}`))
	if err != nil {
		rt.Fatal(err)
	}
	return &claimModel{rt: rt, svc: svc, quorum: quorum, thread: res.Thread.ID}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mark is how a state set by actor counts (§ 5, which § 12 follows for claims).
func (a claimRefActor) mark() (origin string, confirmed bool) {
	switch {
	case a.human:
		return "user", true
	case a.lock:
		return "llm", true
	default:
		return "llm", false
	}
}

// setState is a state change by actor; a state that stays keeps its origin.
func (c *claimRef) setState(a claimRefActor, state string) {
	if c.state != state {
		c.state = state
		c.origin, c.confirmed = a.mark()
	}
}

func (m *claimModel) step() {
	rt := m.rt
	a := rapid.SampledFrom(claimRefActors).Draw(rt, "actor")
	var target *claimRef
	claimID := "cl_999999"
	if len(m.claims) > 0 && rapid.IntRange(0, 9).Draw(rt, "known") > 0 {
		target = rapid.SampledFrom(m.claims).Draw(rt, "claim")
		claimID = target.id
	}
	op := rapid.SampledFrom([]string{"assert", "assert", "attest", "attest", "refute", "verify", "verify", "mark", "lock"}).Draw(rt, "op")
	proof := `[{"kind":"note","ref":"seen in the log"}]`
	var input, want, markState string
	switch op {
	case "lock":
		m.toggleLock()
		return
	case "assert":
		input = `{"thread":"` + m.thread + `","statement":"s","evidence":` + proof + `}`
		if target != nil || claimID != "cl_999999" || rapid.Bool().Draw(rt, "supersede") {
			input = `{"thread":"` + m.thread + `","statement":"s","evidence":` + proof + `,"supersedes":["` + claimID + `"]}`
		} else {
			target, claimID = nil, ""
		}
		want = m.decideAssert(a, target, claimID)
	case "attest", "refute", "verify":
		input = `{"claim":"` + claimID + `","evidence":` + proof + `,"body":"b"}`
		if op != "refute" {
			input = `{"claim":"` + claimID + `","evidence":` + proof + `}`
		}
		want = m.decideStance(a, op, target)
	case "mark":
		markState = rapid.SampledFrom([]string{"unverified", "supported", "verified", "refuted"}).Draw(rt, "state")
		input = `{"claim":"` + claimID + `","state":"` + markState + `"}`
		want = m.decideMark(a, target)
	}
	res, err := claimOp(m.svc, claimActors[a.name], op, input)
	got := "ok"
	if err != nil {
		e, ok := protocol.AsError(err)
		if !ok {
			rt.Fatalf("%s by %s: %v", op, a.name, err)
		}
		got = string(e.Reason)
	}
	if got != want {
		rt.Fatalf("%s %s by %s: the service answers %s, the model %s", op, input, a.name, got, want)
	}
	if got == "ok" {
		m.apply(a, op, target, markState, res.Claim)
	}
}

// toggleLock: a human closes the thread (confirmed: it locks) or reopens it.
func (m *claimModel) toggleLock() {
	kind := "close"
	if m.locked {
		kind = "reopen"
	}
	if _, err := m.svc.Send(context.Background(), claimActors["ada"], []byte(`{"kind":"`+kind+`","thread":"`+m.thread+`","body":"b"}`)); err != nil {
		m.rt.Fatalf("%s: %v", kind, err)
	}
	m.locked = !m.locked
}

// decideAssert is § 12's assert in the check order of § 9.
func (m *claimModel) decideAssert(a claimRefActor, old *claimRef, oldID string) string {
	switch {
	case a.name == "nobody":
		return "unauthenticated"
	case !a.write:
		return "token_right_missing"
	case oldID != "" && old == nil:
		return "not_found"
	case m.locked:
		return "thread_closed"
	case old != nil && old.asserter != a.identity && !a.human && !a.lock && a.identity != "ainotes:alice":
		return "thread_authority_missing"
	case old != nil && (old.state == "superseded" || old.state == "refuted" || old.supersededBy != ""):
		// § 15: a claim is superseded once; its superseded_by stays whatever marks follow.
		return "invalid_transition"
	}
	return "ok"
}

// decideStance is § 12's attest, refute and verify in the check order of § 9.
func (m *claimModel) decideStance(a claimRefActor, op string, c *claimRef) string {
	switch {
	case a.name == "nobody":
		return "unauthenticated"
	case op == "verify" && !a.verify:
		return "token_right_missing"
	case op != "verify" && !a.write:
		return "token_right_missing"
	case c == nil:
		return "not_found"
	case m.locked:
		return "thread_closed"
	case op != "refute" && c.asserter == a.identity:
		return "self_attestation"
	case op == "attest" && contains(c.attesters, a.identity), op == "verify" && contains(c.verifiers, a.identity):
		return "already_attested"
	case op == "attest" && (c.state == "refuted" || c.state == "superseded"):
		return "invalid_transition"
	case op == "refute" && c.state == "superseded":
		return "invalid_transition"
	case op == "verify" && c.state != "supported":
		return "invalid_transition"
	}
	return "ok"
}

// decideMark is § 12's mark: humans only.
func (m *claimModel) decideMark(a claimRefActor, c *claimRef) string {
	switch {
	case a.name == "nobody":
		return "unauthenticated"
	case !a.human:
		return "token_right_missing"
	case c == nil:
		return "not_found"
	case m.locked:
		return "thread_closed"
	}
	return "ok"
}

// apply changes the model as the text says an accepted operation does.
func (m *claimModel) apply(a claimRefActor, op string, c *claimRef, markState string, got *protocol.ClaimView) {
	switch op {
	case "assert":
		n := &claimRef{id: got.ID, asserter: a.identity, state: "unverified"}
		n.origin, n.confirmed = a.mark()
		if c != nil {
			c.setState(a, "superseded")
			c.supersededBy = n.id
			n.supersedes = []string{c.id}
		}
		m.claims = append(m.claims, n)
	case "attest":
		c.attesters = append(c.attesters, a.identity)
		if c.state == "unverified" {
			c.setState(a, "supported")
		}
	case "refute":
		c.refutations++
		c.setState(a, "refuted")
	case "verify":
		c.verifiers = append(c.verifiers, a.identity)
		if len(c.verifiers) >= m.quorum {
			c.setState(a, "verified")
		}
	case "mark":
		c.state = markState
		c.origin, c.confirmed = "user", true
		// § 15: a mark changes the state, never the history: supersedes and superseded_by
		// stay.
	}
}

// compare checks every claim of the thread against the model.
func (m *claimModel) compare() {
	res, err := m.svc.ReadThread(context.Background(), reader, []byte(`{"thread":"`+m.thread+`"}`))
	if err != nil {
		m.rt.Fatal(err)
	}
	if len(res.Claims) != len(m.claims) {
		m.rt.Fatalf("the thread has %d claims, the model %d", len(res.Claims), len(m.claims))
	}
	for i, c := range res.Claims {
		ref := m.claims[i]
		by := ""
		if c.SupersededBy != nil {
			by = *c.SupersededBy
		}
		got := fmt.Sprintf("%s %s %s/%v by=%q supersedes=%v att=%d ref=%d ver=%d", c.ID, c.State, c.StateOrigin, c.Confirmed, by, c.Supersedes,
			len(c.Attestations), len(c.Refutations), len(c.Verifications))
		supersedes := ref.supersedes
		if supersedes == nil {
			supersedes = []string{}
		}
		want := fmt.Sprintf("%s %s %s/%v by=%q supersedes=%v att=%d ref=%d ver=%d", ref.id, ref.state, ref.origin, ref.confirmed, ref.supersededBy, supersedes,
			len(ref.attesters), ref.refutations, len(ref.verifiers))
		if got != want {
			m.rt.Fatalf("claim %s:\nservice %s\nmodel   %s", c.ID, got, want)
		}
	}
}
