package reputation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/reputation"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestRecordModel replays random histories through the real operation layer — sends of every
// kind, confirm and mark, assert (superseding or not, expiring or not), attest, refute,
// verify and a human's mark of a claim, by models with and without the lock and verify
// rights and by a human, many of them refused — and then checks every identity's record
// against a model computed from the thread's events alone (and, for messages, the accepted
// sends): who asserted which claim, who attested, refuted or verified it, the state each
// claim ended in, and each proposal's fate by the next state event of its thread (and, after
// a confirm, by whether its confirmer took it back with a mark of their own). It checks
// twice: now, and two hours later, when the claims with a valid_until have expired. Both
// databases; the model shares no code with the package beyond protocol's vocabulary.
func TestRecordModel(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1 << 20
		svc := protocol.New(db, protocol.Options{Limits: limits})
		rapid.Check(t, func(rt *rapid.T) {
			h := &history{rt: rt, svc: svc, validUntil: map[string]bool{}}
			h.begin()
			for range rapid.IntRange(1, 40).Draw(rt, "steps") {
				h.step()
			}
			h.check(0)
			h.check(2 * time.Hour)
		})
	})
}

func actor(handle, rights string) *protocol.Actor {
	r, err := protocol.ParseRights(rights)
	if err != nil {
		panic(err)
	}
	return &protocol.Actor{Identity: protocol.AgentIdentity("ainotes", handle), Rights: r}
}

// Each history gets identities of its own (a run number in the handle), so that the runs of
// rapid on one database never count each other's acts.
var run atomic.Int64

type history struct {
	rt         *rapid.T
	svc        *protocol.Service
	actors     []*protocol.Actor
	threads    []string
	claims     []string
	validUntil map[string]bool // claims asserted with a valid_until one hour ahead
	messages   map[string]map[string]int
	opened     map[string]int
}

func (h *history) begin() {
	p := fmt.Sprintf("r%d-", run.Add(1))
	h.actors = []*protocol.Actor{
		actor(p+"alice", "read,write"), actor(p+"bob", "read,write"), actor(p+"vera", "read,write,verify"),
		actor(p+"mod", "read,write,lock"), protocol.HumanActor(p + "ada"),
	}
	h.messages = map[string]map[string]int{}
	h.opened = map[string]int{}
	h.ask(h.actors[0])
}

func (h *history) ask(a *protocol.Actor) {
	res, err := h.svc.Send(context.Background(), a, []byte(`{"kind":"ask","body":"Which port?"}`))
	if err != nil {
		h.rt.Fatalf("ask: %v", err)
	}
	h.threads = append(h.threads, res.Thread.ID)
	h.sent(a, "ask")
	h.opened[a.Identity]++
}

func (h *history) sent(a *protocol.Actor, kind string) {
	if h.messages[a.Identity] == nil {
		h.messages[a.Identity] = map[string]int{}
	}
	h.messages[a.Identity][kind]++
}

func (h *history) step() {
	ctx := context.Background()
	a := rapid.SampledFrom(h.actors).Draw(h.rt, "actor")
	th := rapid.SampledFrom(h.threads).Draw(h.rt, "thread")
	switch rapid.IntRange(0, 9).Draw(h.rt, "op") {
	case 0:
		if len(h.threads) < 4 {
			h.ask(a)
		}
	case 1, 2:
		kind := rapid.SampledFrom([]string{"ask", "answer", "note", "decide", "close", "reopen", "defer", "reject", "obsolete"}).Draw(h.rt, "kind")
		in, _ := json.Marshal(map[string]any{"kind": kind, "thread": th, "body": "a body"})
		if _, err := h.svc.Send(ctx, a, in); err == nil {
			h.sent(a, kind)
		}
	case 3:
		_, _ = h.svc.Confirm(ctx, a, []byte(`{"thread":"`+th+`"}`))
	case 4:
		state := rapid.SampledFrom(protocol.AllStates()).Draw(h.rt, "state")
		_, _ = h.svc.Mark(ctx, a, []byte(`{"thread":"`+th+`","state":"`+string(state)+`"}`))
	case 5:
		in := map[string]any{"thread": th, "statement": "Port 8080.", "evidence": []any{map[string]any{"kind": "note", "ref": "seen"}}}
		expires := rapid.Bool().Draw(h.rt, "expires")
		if expires {
			in["valid_until"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		}
		if len(h.claims) > 0 && rapid.Bool().Draw(h.rt, "supersedes") {
			in["supersedes"] = []string{rapid.SampledFrom(h.claims).Draw(h.rt, "old")}
		}
		raw, _ := json.Marshal(in)
		if res, err := h.svc.Assert(ctx, a, raw); err == nil {
			h.claims = append(h.claims, res.Claim.ID)
			h.validUntil[res.Claim.ID] = expires
		}
	case 6, 7, 8:
		if len(h.claims) == 0 {
			return
		}
		cl := rapid.SampledFrom(h.claims).Draw(h.rt, "claim")
		ev := `"evidence":[{"kind":"log","ref":"ran it"}]`
		switch rapid.IntRange(0, 2).Draw(h.rt, "stance") {
		case 0:
			_, _ = h.svc.Attest(ctx, a, []byte(`{"claim":"`+cl+`",`+ev+`}`))
		case 1:
			_, _ = h.svc.Refute(ctx, a, []byte(`{"claim":"`+cl+`",`+ev+`,"body":"It is 9090."}`))
		default:
			_, _ = h.svc.Verify(ctx, a, []byte(`{"claim":"`+cl+`"}`))
		}
	case 9:
		if len(h.claims) == 0 {
			return
		}
		cl := rapid.SampledFrom(h.claims).Draw(h.rt, "claim")
		state := rapid.SampledFrom(protocol.ClaimStates).Draw(h.rt, "claim state")
		_, _ = h.svc.MarkClaim(ctx, a, []byte(`{"claim":"`+cl+`","state":"`+string(state)+`"}`))
	}
}

// events reads every event of the history's threads, oldest first.
func (h *history) events() []*protocol.EventView {
	var out []*protocol.EventView
	reader := actor("reader", "read")
	for _, th := range h.threads {
		since := ""
		for {
			in := map[string]any{"thread": th}
			if since != "" {
				in["since"] = since
			}
			raw, _ := json.Marshal(in)
			res, err := h.svc.ReadEvents(context.Background(), reader, raw)
			if err != nil {
				h.rt.Fatalf("events of %s: %v", th, err)
			}
			out = append(out, res.Events...)
			since = res.Cursor
			if !res.More {
				break
			}
		}
	}
	return out
}

// model computes every identity's record from the events and the accepted sends alone.
func (h *history) model(later time.Duration) map[string]*reputation.Record {
	out := map[string]*reputation.Record{}
	rec := func(id string) *reputation.Record {
		if out[id] == nil {
			r := &reputation.Record{Messages: map[string]int{}}
			for _, k := range protocol.Kinds {
				r.Messages[string(k.Kind)] = 0
			}
			out[id] = r
		}
		return out[id]
	}
	for id, kinds := range h.messages {
		for k, n := range kinds {
			rec(id).Messages[k] += n
		}
		rec(id).ThreadsOpened = h.opened[id]
	}
	type claim struct{ asserter, state string }
	type stance struct{ by, kind, claim string }
	claims := map[string]*claim{}
	var stances []stance
	// The proposals of each thread still waiting for their fate, by thread; and those
	// confirmed, until the thread's next change of state says whether the confirmer took the
	// confirm back (a mark of their own to a state that does not uphold the proposal).
	type proposal struct{ by, to, confirmer string }
	pending := map[string]*proposal{}
	confirmed := map[string]*proposal{}
	stateAct := map[string]bool{"confirm": true, "mark": true}
	for _, k := range protocol.Kinds {
		stateAct[string(k.Kind)] = true
	}
	mainRank := map[string]int{"open": 1, "answered": 2, "decided": 3, "closed": 4}
	for _, ev := range h.events() {
		rec(ev.Actor.Identity)
		if strings.HasPrefix(ev.Subject, "cl_") {
			switch ev.Act {
			case "assert":
				claims[ev.Subject] = &claim{asserter: ev.Actor.Identity}
			case "attest", "refute", "verify":
				stances = append(stances, stance{ev.Actor.Identity, ev.Act, ev.Subject})
			}
			claims[ev.Subject].state = string(ev.To)
			continue
		}
		if ev.From == nil || !stateAct[ev.Act] { // the thread's opening, or no state at all
			continue
		}
		isProposal := ev.Origin == "llm" && ev.Act != "confirm" && !strings.HasPrefix(ev.Label, "KI · ")
		upholds := func(p *proposal) bool {
			return string(ev.To) == p.to || (mainRank[p.to] > 0 && mainRank[string(ev.To)] > mainRank[p.to])
		}
		if p := confirmed[ev.Thread]; p != nil {
			delete(confirmed, ev.Thread)
			if ev.Act == "mark" && ev.Actor.Identity == p.confirmer && !upholds(p) {
				rec(p.by).Proposals.Corrected++ // the confirmer took the confirm back
			} else {
				rec(p.by).Proposals.Confirmed++
			}
		}
		if p := pending[ev.Thread]; p != nil {
			delete(pending, ev.Thread)
			switch {
			case ev.Act == "confirm":
				p.confirmer = ev.Actor.Identity
				confirmed[ev.Thread] = p
			case isProposal:
				rec(p.by).Proposals.Open++ // overtaken before anyone judged
			case upholds(p):
				rec(p.by).Proposals.Confirmed++
			default:
				rec(p.by).Proposals.Corrected++
			}
		}
		if isProposal {
			pending[ev.Thread] = &proposal{by: ev.Actor.Identity, to: string(ev.To)}
		}
	}
	for _, p := range pending {
		rec(p.by).Proposals.Open++
	}
	for _, p := range confirmed {
		rec(p.by).Proposals.Confirmed++
	}
	for id, c := range claims {
		r := rec(c.asserter)
		switch {
		case c.state == "superseded": // an ended claim shows how it ended, expired or not
			r.Claims.Superseded++
		case c.state == "refuted":
			r.Claims.Refuted++
		case h.validUntil[id] && later > time.Hour: // expiry grades only a standing claim
			r.Claims.Expired++
		case c.state == "verified":
			r.Claims.Verified++
		case c.state == "supported":
			r.Claims.Supported++
		case c.state == "unverified":
			r.Claims.Unverified++
		}
	}
	for _, s := range stances {
		r, state := rec(s.by), claims[s.claim].state
		switch {
		case s.kind == "attest" && state == "verified":
			r.Attestations.OnVerified++
		case s.kind == "attest" && state == "refuted":
			r.Attestations.OnRefuted++
		case s.kind == "attest":
			r.Attestations.Other++
		case s.kind == "verify" && state == "refuted":
			r.Verifications.Fell++
		case s.kind == "verify":
			r.Verifications.Held++
		case state == "refuted":
			r.Refutations.Standing++
		default:
			r.Refutations.Overruled++
		}
	}
	return out
}

// check compares the model with the records as GET /v1/identities/{identity} answers them and
// as the ranking lists them, later after now.
func (h *history) check(later time.Duration) {
	want := h.model(later)
	svc := reputation.New(h.svc, reputation.Options{Now: func() time.Time { return time.Now().Add(later) }})
	reader := actor("reader", "read")
	listed := map[string]*reputation.Identity{}
	res, err := svc.Ranked(context.Background(), reader, reputation.OrderReliability, "", 1<<20)
	if err != nil {
		h.rt.Fatal(err)
	}
	for _, v := range res.Identities {
		listed[v.Identity] = v
	}
	for _, a := range h.actors {
		got, err := svc.ReadIdentity(context.Background(), reader, []byte(`{"identity":"`+a.Identity+`"}`))
		w := want[a.Identity]
		if w == nil {
			if refusal, ok := protocol.AsError(err); !ok || refusal.Reason != protocol.ReasonNotFound {
				h.rt.Fatalf("%s has done nothing: want not_found, got %v, %v", a.Identity, got, err)
			}
			continue
		}
		if err != nil {
			h.rt.Fatalf("%s: %v", a.Identity, err)
		}
		if d := cmp.Diff(*w, got.Record); d != "" {
			h.rt.Fatalf("record of %s, %v later (-model +record):\n%s", a.Identity, later, d)
		}
		if l := listed[a.Identity]; l == nil || cmp.Diff(got.Record, l.Record) != "" {
			h.rt.Fatalf("the ranking's record of %s differs from its own: %+v", a.Identity, l)
		}
		sc := got.Policy.Scores
		held := w.Claims.Verified + w.Attestations.OnVerified + w.Verifications.Held + w.Refutations.Standing + w.Proposals.Confirmed
		fell := w.Claims.Refuted + w.Attestations.OnRefuted + w.Verifications.Fell + w.Refutations.Overruled + w.Proposals.Corrected
		if sc.Held != held || sc.Fell != fell || sc.Evidence != held+fell || (sc.Reliability == nil) != (held+fell == 0) {
			h.rt.Fatalf("scores of %s: %+v, want held %d fell %d", a.Identity, sc, held, fell)
		}
	}
}
