package protocol_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestModel checks the Service against a reference model of PROTOCOL.md §§ 3–6 written from the
// text alone: the model calls none of the package's rules (Next, CheckAuthority, CheckSelfReply,
// MarkingOf). Random sequences of the nine acts, confirmations and marks, by agents with one or
// two extensions, a lock holder, a human and a read-only token, run on both databases; after
// every step the model and the Service must agree on the decision (accepted, or refused and
// why), on the thread the step named (state, origin, confirmation, confirmed state, lock, whose
// turn it is and who set it, its messages) and on its events, which must replay to the thread;
// at the end of a check, on every thread.
//
// Each rapid check opens threads of its own (at most two), so the checks are independent though
// they share a database. A check takes at most -model.steps steps; for a longer run:
// go test ./protocol -run TestModel -rapid.checks=5000 -model.steps=100.
var refSteps = flag.Int("model.steps", 30, "TestModel: the most steps one rapid check takes")

func TestModel(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		limits := protocol.DefaultLimits()
		limits.WritesPerMinute = 1 << 30 // the rate limit is not the model's subject
		limits.ThreadMaxMessages = refMaxMessages
		limits.ThreadMaxDepth = refMaxDepth
		svc := protocol.New(db, protocol.Options{Limits: limits})
		rapid.Check(t, func(rt *rapid.T) {
			run := newRefRun(rt, svc)
			for range rapid.IntRange(1, *refSteps).Draw(rt, "steps") {
				run.step()
				run.checkThread(run.touched)
			}
			for _, th := range run.threads {
				run.checkThread(th) // no step changed a thread it did not name
			}
		})
	})
}

// The model. Its names follow the text of PROTOCOL.md; where the text leaves a choice open,
// the comment says which reading the model takes.

const (
	refMaxMessages = 10 // § 8 thread_max_messages, small so that runs reach it
	refMaxDepth    = 3  // § 8 thread_max_depth; the root is at depth 0
)

var (
	refKinds  = []string{"ask", "answer", "note", "decide", "close", "reopen", "defer", "reject", "obsolete"}
	refStates = []string{"open", "answered", "decided", "closed", "deferred", "obsolete", "rejected"}

	// refMarks is § 3's column "state effect": the state each act marks.
	refMarks = map[string]string{
		"answer": "answered", "decide": "decided", "close": "closed", "reopen": "open",
		"defer": "deferred", "reject": "rejected", "obsolete": "obsolete",
	}

	// refTable is the full table of § 4, cell by cell as printed. Rows: the current state;
	// columns: the act; for an actor that passed the authority check.
	refTable = map[string]map[string]string{
		"open": {"ask/note": "stay", "answer": "answered", "decide": "decided",
			"close": "invalid (human: closed)", "defer/reject/obsolete": "side state", "reopen": "invalid"},
		"answered": {"ask/note": "stay", "answer": "stay", "decide": "decided",
			"close": "closed", "defer/reject/obsolete": "side state", "reopen": "invalid"},
		"decided": {"ask/note": "stay", "answer": "stay", "decide": "stay (revision)",
			"close": "closed", "defer/reject/obsolete": "side state", "reopen": "invalid"},
		"closed, proposed": {"ask/note": "stay", "answer": "stay", "decide": "invalid",
			"close": "stay", "defer/reject/obsolete": "invalid", "reopen": "open"},
		"closed, confirmed": {"ask/note": "thread_closed", "answer": "thread_closed", "decide": "thread_closed",
			"close": "thread_closed", "defer/reject/obsolete": "thread_closed", "reopen": "open"},
		"deferred/obsolete/rejected": {"ask/note": "stay", "answer": "stay", "decide": "invalid",
			"close": "invalid", "defer/reject/obsolete": "invalid", "reopen": "open (moderation only)"},
	}
)

func refSide(state string) bool {
	return state == "deferred" || state == "obsolete" || state == "rejected"
}

// refAuthorityAct: § 6 "decide, close, defer, reject, obsolete need authority", and reopen
// has rules of its own (§ 6.3); ask, answer and note need only write.
func refAuthorityAct(kind string) bool {
	switch kind {
	case "decide", "close", "defer", "reject", "obsolete", "reopen":
		return true
	}
	return false
}

func refRow(state string, confirmed bool) string {
	switch {
	case state == "closed" && confirmed:
		return "closed, confirmed"
	case state == "closed":
		return "closed, proposed"
	case refSide(state):
		return "deferred/obsolete/rejected"
	}
	return state
}

func refColumn(kind string) string {
	switch kind {
	case "ask", "note":
		return "ask/note"
	case "defer", "reject", "obsolete":
		return "defer/reject/obsolete"
	}
	return kind
}

// refNext reads § 4 for one act: the state it leads to, or the reason it is refused. The human
// (§ 4, § 6.4): decide, close, defer, reject, obsolete and reopen apply from any state, but a
// confirmed closed still needs reopen first.
func refNext(state string, confirmed bool, kind string, human bool) (next, reason string) {
	row := refRow(state, confirmed)
	if human && refAuthorityAct(kind) && row != "closed, confirmed" {
		return refMarks[kind], ""
	}
	switch cell := refTable[row][refColumn(kind)]; cell {
	case "stay", "stay (revision)":
		return state, ""
	case "thread_closed":
		return "", "thread_closed"
	case "invalid":
		return "", "invalid_transition"
	case "invalid (human: closed)":
		if human {
			return "closed", ""
		}
		return "", "invalid_transition"
	case "side state":
		return refMarks[kind], ""
	case "open (moderation only)":
		return "open", "" // the authority check has already asked for moderation
	default:
		return cell, ""
	}
}

// refActor is one line of speech that may act: an identity, its extensions, its rights.
type refActor struct {
	identity string
	exts     []string
	write    bool
	lock     bool
	human    bool
	actor    *protocol.Actor
}

// refHasAuthority is § 6: the creator (the line, whatever the extension), a lock holder, a
// human. Reopening a side state is moderation: lock holder or human. Reopening anything else
// falls under the general rule (the creator too), and § 4 then refuses it unless it is closed.
func refHasAuthority(a *refActor, th *refThread, kind string) bool {
	if !refAuthorityAct(kind) || a.human || a.lock {
		return true
	}
	if kind == "reopen" && refSide(th.state) {
		return false
	}
	return a.identity == th.creator
}

type refParty struct{ identity, ext string }

// refAwaiting is § 3's awaiting: one party (to), or anyone but one (any, except).
type refAwaiting struct {
	any   bool
	party refParty
	setBy int // index of the message that set it
}

type refMessage struct {
	id       string // as the server named it
	kind     string
	author   refParty
	parent   int // index in the thread, -1 for the root
	depth    int
	awaiting *refAwaiting // the awaiting it left
}

type refThread struct {
	id             string // as the server named it
	name           string // T1, T2: failure messages name no server id, so that rapid can shrink
	creator        string
	state          string
	origin         string
	confirmed      bool
	confirmedState string
	awaiting       *refAwaiting
	messages       []refMessage
	events         int
}

func (th *refThread) locked() bool { return th.state == "closed" && th.confirmed }

// defaultParent is § 3's column "default parent": answer attaches to the message that set the
// current awaiting (else the root), everything else to the root.
func (th *refThread) defaultParent(kind string) int {
	if kind == "answer" && th.awaiting != nil {
		return th.awaiting.setBy
	}
	return 0
}

// nearestAsk is "the nearest ask at or above" message i.
func (th *refThread) nearestAsk(i int) int {
	for th.messages[i].kind != "ask" {
		i = th.messages[i].parent
	}
	return i
}

// marking is § 5: a human's state is confirmed with origin user, a lock holder's is confirmed
// with origin llm, any other model's is a proposal.
func (a *refActor) marking() (origin string, confirmed bool) {
	if a.human {
		return "user", true
	}
	return "llm", a.lock
}

// refRun is one rapid check: its actors, its threads, the Service.
type refRun struct {
	t       *rapid.T
	svc     *protocol.Service
	actors  []*refActor // weighted: every actor but the read-only one twice
	mods    []*refActor // for confirm and mark: the lock holder and the human more often
	reader  *protocol.Actor
	threads []*refThread
	touched *refThread // the thread the last step named
	steps   int
	what    string // the step being checked, for failure messages
}

func newRefRun(t *rapid.T, svc *protocol.Service) *refRun {
	r := &refRun{t: t, svc: svc, reader: refProtocolActor("ainotes:auditor", "read", false)}
	pool := []string{"", "w1", "w2"}
	exts := func(label string) []string {
		first := rapid.SampledFrom(pool).Draw(t, label)
		if rapid.Bool().Draw(t, label+" has two") {
			for _, e := range pool {
				if e != first {
					return []string{first, e}
				}
			}
		}
		return []string{first}
	}
	agents := []string{"alice", "bob", "carol"}[:rapid.IntRange(2, 3).Draw(t, "agents")]
	for _, name := range agents {
		id := "ainotes:" + name
		a := &refActor{identity: id, exts: exts(name), write: true, actor: refProtocolActor(id, "read,write", false)}
		r.actors = append(r.actors, a, a)
	}
	mod := &refActor{identity: "ainotes:mod", exts: exts("mod"), write: true, lock: true,
		actor: refProtocolActor("ainotes:mod", "read,write,lock", false)}
	human := &refActor{identity: "human:hana", exts: exts("hana"), write: true, human: true,
		actor: refProtocolActor("human:hana", "", true)}
	viewer := &refActor{identity: "ainotes:viewer", exts: []string{""},
		actor: refProtocolActor("ainotes:viewer", "read", false)}
	r.actors = append(r.actors, mod, mod, human, human, viewer)
	alice, bob := r.actors[0], r.actors[2]
	r.mods = []*refActor{mod, mod, mod, human, human, human, alice, bob, viewer}
	return r
}

// GoString names the actor in rapid's log of draws.
func (a *refActor) GoString() string { return fmt.Sprintf("%s %q", a.identity, a.exts) }

func refProtocolActor(identity, rights string, human bool) *protocol.Actor {
	if human {
		return &protocol.Actor{Identity: identity, Human: true, Rights: protocol.AllRightsSet()}
	}
	rs, err := protocol.ParseRights(rights)
	if err != nil {
		panic(err)
	}
	return &protocol.Actor{Identity: identity, Rights: rs}
}

func (r *refRun) drawActor(label string) (*refActor, string) {
	return r.drawFrom(r.actors, label)
}

func (r *refRun) drawFrom(actors []*refActor, label string) (*refActor, string) {
	a := rapid.SampledFrom(actors).Draw(r.t, label)
	return a, rapid.SampledFrom(a.exts).Draw(r.t, label+" extension")
}

// drawThread picks a thread of the run.
func (r *refRun) drawThread() (int, *refThread) {
	r.steps++
	i := rapid.IntRange(0, len(r.threads)-1).Draw(r.t, "thread")
	r.touched = r.threads[i]
	return i, r.threads[i]
}

// step is one random act, confirmation or mark; a check begins by opening a thread, and opens
// at most two.
func (r *refRun) step() {
	actions := []string{"ask", "answer", "note", "act", "confirm", "mark", "open"}
	if len(r.threads) == 2 {
		actions = actions[:6]
	}
	action := "open"
	if len(r.threads) > 0 {
		action = rapid.SampledFrom(actions).Draw(r.t, "action")
	}
	switch action {
	case "open":
		r.open()
	case "act":
		r.send(refKinds[3:]...)
	case "confirm":
		r.confirm()
	case "mark":
		r.mark()
	default:
		r.send(action)
	}
}

// open: an ask without thread or parent opens a thread (§ 3).
func (r *refRun) open() {
	r.steps++
	i := r.steps
	a, ext := r.drawActor("actor")
	env := map[string]any{"kind": "ask", "body": fmt.Sprintf("question %d", i), "from": map[string]any{"extension": ext}}
	r.what = fmt.Sprintf("step %d: %s/%q opens a thread", i, a.identity, ext)
	want := ""
	if !a.write {
		want = "token_right_missing"
	}
	res, err := r.svc.Send(context.Background(), a.actor, refJSON(env))
	if !r.decided(want, err) {
		return
	}
	// The text leaves open how an opening counts: the model reads a new thread as confirmed
	// open (there is no proposal to confirm yet, and confirmed_state is open), with the
	// opener's origin.
	origin, _ := a.marking()
	th := &refThread{id: res.Thread.ID, name: fmt.Sprintf("T%d", len(r.threads)+1), creator: a.identity,
		state: "open", origin: origin, confirmed: true, confirmedState: "open", events: 1}
	aw := &refAwaiting{any: true, party: refParty{a.identity, ext}, setBy: 0}
	th.messages = []refMessage{{id: res.Message.ID, kind: "ask", author: refParty{a.identity, ext}, parent: -1, awaiting: aw}}
	th.awaiting = aw
	r.threads = append(r.threads, th)
	r.touched = th
	r.compareMessage(th, 0, res.Message)
	r.compareThread(th, res.Thread)
}

// send: one of the nine acts into a thread of the run, with the default parent or an explicit
// one (with or without the thread field), or with a parent from the other thread.
func (r *refRun) send(kinds ...string) {
	ti, th := r.drawThread()
	kind := kinds[0]
	if len(kinds) > 1 {
		kind = rapid.SampledFrom(kinds).Draw(r.t, "kind")
	}
	i := r.steps
	a, ext := r.drawActor("actor")
	env := map[string]any{"kind": kind, "body": fmt.Sprintf("%s %d", kind, i), "from": map[string]any{"extension": ext}}
	explicit, foreign := -1, false
	switch mode := rapid.IntRange(0, 11).Draw(r.t, "parent mode"); {
	case mode <= 5:
		env["thread"] = th.id
	case mode <= 8:
		explicit = rapid.IntRange(0, len(th.messages)-1).Draw(r.t, "parent")
		env["thread"], env["parent"] = th.id, th.messages[explicit].id
	case mode <= 10:
		explicit = rapid.IntRange(0, len(th.messages)-1).Draw(r.t, "parent")
		env["parent"] = th.messages[explicit].id // § 2: the thread is the parent's
	case len(r.threads) == 2:
		other := r.threads[1-ti]
		p := rapid.IntRange(0, len(other.messages)-1).Draw(r.t, "foreign parent")
		env["thread"], env["parent"] = th.id, other.messages[p].id
		foreign = true
	default:
		env["thread"] = th.id
	}
	parentName := "default"
	if p, ok := env["parent"].(string); ok {
		parentName = r.local(p)
	}
	if _, ok := env["thread"]; !ok {
		parentName += " (no thread field)"
	}
	r.what = fmt.Sprintf("step %d: %s/%q sends %s into %s (state %s, confirmed %v), parent %s", i, a.identity, ext, kind, th.name, th.state, th.confirmed, parentName)

	// § 9: envelope → token right → existence → thread_closed → authority → self_reply →
	// transition → limits.
	want, parent, next := "", explicit, ""
	switch {
	case !a.write:
		want = "token_right_missing"
	case foreign:
		want = "not_found" // § 2: the parent MUST belong to the thread
	case th.locked() && kind != "reopen":
		want = "thread_closed"
	case !refHasAuthority(a, th, kind):
		want = "thread_authority_missing"
	}
	if want == "" {
		if parent < 0 {
			parent = th.defaultParent(kind)
		}
		// § 6 loop protection, per (identity, extension); the state acts and humans are exempt.
		loop := kind == "ask" || kind == "answer" || kind == "note"
		if loop && !a.human && th.messages[parent].author == (refParty{a.identity, ext}) {
			want = "self_reply"
		}
	}
	if want == "" {
		next, want = refNext(th.state, th.confirmed, kind, a.human)
	}
	if want == "" && (len(th.messages) >= refMaxMessages || th.messages[parent].depth+1 > refMaxDepth) {
		want = "limit_exceeded"
	}

	res, err := r.svc.Send(context.Background(), a.actor, refJSON(env))
	if !r.decided(want, err) {
		return
	}

	// § 4 and § 5: the state and how it counts.
	origin, confirmed := a.marking()
	switch {
	case next != th.state:
		th.state, th.origin, th.confirmed = next, origin, confirmed
		if confirmed {
			th.confirmedState = next
		}
		th.events++
	case refAuthorityAct(kind) && refMarks[kind] == th.state && confirmed && !th.confirmed:
		// The text leaves open what a moderator's act on its own, proposed state does. The
		// model reads § 5 ("only a lock holder or a human sets a confirmed state: a lock
		// holder's act produces … state_confirmed_at set") as: the act sets that state
		// itself, confirmed, and that is a change of state with its event.
		th.origin, th.confirmed, th.confirmedState = origin, true, th.state
		th.events++
	}

	// § 3's column "awaiting after it".
	idx := len(th.messages)
	self := refParty{a.identity, ext}
	m := refMessage{id: res.Message.ID, kind: kind, author: self, parent: parent, depth: th.messages[parent].depth + 1}
	th.messages = append(th.messages, m)
	switch kind {
	case "ask":
		if explicit >= 0 {
			th.awaiting = &refAwaiting{party: th.messages[parent].author, setBy: idx}
		} else {
			th.awaiting = &refAwaiting{any: true, party: self, setBy: idx}
		}
	case "answer":
		th.awaiting = &refAwaiting{party: th.messages[th.nearestAsk(parent)].author, setBy: idx}
	case "note":
		// unchanged: a note copies it
	case "reopen":
		th.awaiting = &refAwaiting{any: true, party: self, setBy: idx}
	default:
		th.awaiting = nil
	}
	th.messages[idx].awaiting = th.awaiting
	r.compareMessage(th, idx, res.Message)
	r.compareThread(th, res.Thread)
}

// confirm is § 5: a lock holder or a human confirms the current proposal.
func (r *refRun) confirm() {
	_, th := r.drawThread()
	i := r.steps
	a, _ := r.drawFrom(r.mods, "actor")
	r.what = fmt.Sprintf("step %d: %s confirms %s (state %s, confirmed %v)", i, a.identity, th.name, th.state, th.confirmed)
	want := ""
	switch {
	case !a.human && !a.lock:
		want = "token_right_missing"
	case th.locked():
		want = "thread_closed"
	case th.confirmed:
		want = "invalid_transition"
	}
	res, err := r.svc.Confirm(context.Background(), a.actor, refJSON(map[string]any{"thread": th.id}))
	if !r.decided(want, err) {
		return
	}
	th.confirmed, th.confirmedState = true, th.state // the origin stays whose state it is
	th.events++
	r.compareThread(th, res.Thread)
	if ev := res.Event; ev.Act != "confirm" || ev.From == nil || string(*ev.From) != th.state ||
		string(ev.To) != th.state || ev.Confirms == nil || !ev.Confirmed {
		r.t.Logf("the confirm event: %+v", ev)
		r.t.Fatalf("%s: the confirm event is not a confirm of the current state", r.what)
	}
}

// mark is § 5: a human re-marks a thread with any state, confirmed. The model reads § 4's
// "a confirmed closed still needs reopen first" as holding for mark too (thread_closed).
func (r *refRun) mark() {
	_, th := r.drawThread()
	i := r.steps
	a, _ := r.drawFrom(r.mods, "actor")
	state := rapid.SampledFrom(append([]string{"pending"}, refStates...)).Draw(r.t, "state")
	r.what = fmt.Sprintf("step %d: %s marks %s (state %s, confirmed %v) %s", i, a.identity, th.name, th.state, th.confirmed, state)
	want := ""
	switch {
	case state == "pending":
		want = "invalid_body"
	case !a.human:
		want = "token_right_missing"
	case th.locked():
		want = "thread_closed"
	}
	res, err := r.svc.Mark(context.Background(), a.actor, refJSON(map[string]any{"thread": th.id, "state": state}))
	if !r.decided(want, err) {
		return
	}
	th.state, th.origin, th.confirmed, th.confirmedState = state, "user", true, state
	th.events++
	r.compareThread(th, res.Thread)
	if ev := res.Event; ev.Act != "mark" || string(ev.To) != state || ev.Origin != "user" || !ev.Confirmed {
		r.t.Logf("the mark event: %+v", ev)
		r.t.Fatalf("%s: the mark event is not a confirmed mark by a human to %s", r.what, state)
	}
}

// decided compares the Service's decision with the model's (want "" is accepted) and reports
// whether the request was accepted.
func (r *refRun) decided(want string, err error) bool {
	r.t.Helper()
	if err == nil {
		if want != "" {
			r.t.Fatalf("%s: accepted; the model refuses it with %s", r.what, want)
		}
		return true
	}
	// The Service's message names server ids: logged, but kept out of the failure, which
	// must read the same in every reproduction for rapid to shrink it.
	r.t.Logf("%s: %v", r.what, err)
	e, ok := protocol.AsError(err)
	switch {
	case !ok:
		r.t.Fatalf("%s: a server fault", r.what)
	case want == "":
		r.t.Fatalf("%s: refused with %s; the model accepts it", r.what, e.Reason)
	case string(e.Reason) != want:
		r.t.Fatalf("%s: refused with %s; the model refuses it with %s", r.what, e.Reason, want)
	}
	return false
}

func (r *refRun) compareThread(th *refThread, v *protocol.ThreadView) {
	r.t.Helper()
	id := th.name
	if v.ID != th.id {
		id = "another thread"
	}
	got := fmt.Sprintf("id=%s creator=%s state=%s origin=%s confirmed=%v confirmed_state=%s locked=%v messages=%d awaiting=%s",
		id, v.Creator, v.State, v.StateOrigin, v.StateConfirmedAt != nil, v.ConfirmedState, v.Locked, v.MessageCount, r.awaitingOfView(v.Awaiting))
	want := fmt.Sprintf("id=%s creator=%s state=%s origin=%s confirmed=%v confirmed_state=%s locked=%v messages=%d awaiting=%s",
		th.name, th.creator, th.state, th.origin, th.confirmed, th.confirmedState, th.locked(), len(th.messages), th.awaitingString(th.awaiting))
	if got != want {
		r.t.Fatalf("%s:\nthread %s\nmodel  %s", r.what, got, want)
	}
}

func (r *refRun) compareMessage(th *refThread, i int, v *protocol.MessageView) {
	r.t.Helper()
	m := th.messages[i]
	parent := "none"
	if m.parent >= 0 {
		parent = th.messageName(m.parent)
	}
	gotParent := "none"
	if v.Parent != nil {
		gotParent = r.local(*v.Parent)
	}
	thread := th.name
	if v.Thread != th.id {
		thread = "another thread"
	}
	got := fmt.Sprintf("id=%s kind=%s thread=%s from=%s/%q parent=%s awaiting=%s",
		r.local(v.ID), v.Kind, thread, v.From.Identity, v.From.Extension, gotParent, r.awaitingOfView(v.Awaiting))
	want := fmt.Sprintf("id=%s kind=%s thread=%s from=%s/%q parent=%s awaiting=%s",
		th.messageName(i), m.kind, th.name, m.author.identity, m.author.ext, parent, th.awaitingString(m.awaiting))
	if got != want {
		r.t.Fatalf("%s:\nmessage %s\nmodel   %s", r.what, got, want)
	}
}

func (th *refThread) awaitingString(aw *refAwaiting) string {
	if aw == nil {
		return "null"
	}
	if aw.any {
		return fmt.Sprintf("any except %s/%q set by %s", aw.party.identity, aw.party.ext, th.messageName(aw.setBy))
	}
	return fmt.Sprintf("%s/%q set by %s", aw.party.identity, aw.party.ext, th.messageName(aw.setBy))
}

func (th *refThread) messageName(i int) string { return fmt.Sprintf("%s.m%d", th.name, i) }

// local names a message of the run as the model does (T1.m3).
func (r *refRun) local(id string) string {
	for _, th := range r.threads {
		for i, m := range th.messages {
			if m.id == id {
				return th.messageName(i)
			}
		}
	}
	return "a message not in the model"
}

func (r *refRun) awaitingOfView(aw *protocol.Awaiting) string {
	switch {
	case aw == nil:
		return "null"
	case aw.To != nil && aw.Except == nil:
		return fmt.Sprintf("%s/%q set by %s", aw.To.Identity, aw.To.Extension, r.local(protocol.MessageKey(aw.SetBy)))
	case aw.To == nil && aw.Except != nil:
		return fmt.Sprintf("any except %s/%q set by %s", aw.Except.Identity, aw.Except.Extension, r.local(protocol.MessageKey(aw.SetBy)))
	}
	return "malformed"
}

// checkThread reads a thread back and compares it, its messages and its events with the
// model: after every step the thread it named, at the end of a check every thread.
func (r *refRun) checkThread(th *refThread) {
	ctx := context.Background()
	if th != nil {
		read, err := r.svc.ReadThread(ctx, r.reader, refJSON(map[string]any{"thread": th.id}))
		if err != nil {
			r.t.Logf("reading %s: %v", th.id, err)
			r.t.Fatalf("%s: reading %s fails", r.what, th.name)
		}
		r.compareThread(th, read.Thread)
		byID := map[string]*protocol.MessageView{}
		var walk func([]*protocol.MessageView)
		walk = func(ms []*protocol.MessageView) {
			for _, m := range ms {
				byID[m.ID] = m
				walk(m.Replies)
			}
		}
		walk(read.Messages)
		if len(byID) != len(th.messages) || len(read.Messages) != 1 {
			r.t.Fatalf("%s: %s reads %d messages (%d roots); the model has %d", r.what, th.name, len(byID), len(read.Messages), len(th.messages))
		}
		for i, m := range th.messages {
			v, ok := byID[m.id]
			if !ok {
				r.t.Fatalf("%s: %s lacks %s", r.what, th.name, th.messageName(i))
			}
			r.compareMessage(th, i, v)
		}

		evs, err := refEvents(r.svc, r.reader, th.id)
		if err != nil {
			r.t.Logf("reading the events of %s: %v", th.id, err)
			r.t.Fatalf("%s: reading the events of %s fails", r.what, th.name)
		}
		if len(evs) != th.events {
			r.t.Fatalf("%s: %s has %d events; the model counts %d", r.what, th.name, len(evs), th.events)
		}
		got, err := refReplay(evs)
		if err != nil {
			r.t.Fatalf("%s: the events of %s: %v", r.what, th.name, err)
		}
		want := refReplayed{state: th.state, origin: th.origin, confirmed: th.confirmed, confirmedState: th.confirmedState}
		if got != want {
			r.t.Fatalf("%s: the events of %s replay to %+v; the thread is %+v", r.what, th.name, got, want)
		}
	}
}

func refJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// refEvents reads all of a thread's events, page by page.
func refEvents(svc *protocol.Service, reader *protocol.Actor, thread string) ([]*protocol.EventView, error) {
	var all []*protocol.EventView
	req := map[string]any{"thread": thread}
	for {
		res, err := svc.ReadEvents(context.Background(), reader, refJSON(req))
		if err != nil {
			return nil, err
		}
		all = append(all, res.Events...)
		if !res.More {
			return all, nil
		}
		req["since"] = res.Cursor
	}
}

// refReplayed is what a thread's events say of its state (§ 7: "Replaying a thread's events from
// its first reproduces its state").
type refReplayed struct {
	state, origin  string
	confirmed      bool
	confirmedState string
}

// refReplay folds a thread's events, oldest first. A state event counts as confirmed at
// once when it reads confirmed and no later confirm names it; a confirm confirms the state
// event before it, and must name exactly that one.
func refReplay(evs []*protocol.EventView) (refReplayed, error) {
	var r refReplayed
	confirmedLater := map[string]*protocol.EventView{}
	for _, ev := range evs {
		if ev.Act == "confirm" && ev.Confirms != nil {
			confirmedLater[*ev.Confirms] = ev
		}
	}
	// Errors name events by their place (#1 is the first), not by id.
	stateEvent, stateEventAt := "", 0
	for i, ev := range evs {
		from := "<none>"
		if ev.From != nil {
			from = string(*ev.From)
		}
		switch {
		case i == 0:
			if ev.Act != "ask" || ev.From != nil || ev.To != "open" {
				return r, fmt.Errorf("the first event is %s %s → %s, not the opening ask", ev.Act, from, ev.To)
			}
		case ev.From == nil || from != r.state:
			return r, fmt.Errorf("event #%d (%s) starts from %s, but the state was %s", i+1, ev.Act, from, r.state)
		}
		if ev.Act == "confirm" {
			switch {
			case string(ev.To) != r.state:
				return r, fmt.Errorf("confirm #%d moves %s to %s", i+1, r.state, ev.To)
			case ev.Confirms == nil || *ev.Confirms != stateEvent:
				return r, fmt.Errorf("confirm #%d does not confirm #%d, the event that set the state", i+1, stateEventAt)
			case r.confirmed:
				return r, fmt.Errorf("confirm #%d confirms the already confirmed %s", i+1, r.state)
			case !ev.Confirmed:
				return r, fmt.Errorf("confirm #%d does not read confirmed", i+1)
			}
			r.confirmed, r.confirmedState = true, r.state
			continue
		}
		later, confirmedLaterOK := confirmedLater[ev.ID]
		if confirmedLaterOK && (!ev.Confirmed || ev.ConfirmedAt == nil || !ev.ConfirmedAt.Equal(later.At)) {
			return r, fmt.Errorf("event #%d was confirmed later but does not read confirmed at that time", i+1)
		}
		r.state, r.origin, stateEvent, stateEventAt = string(ev.To), ev.Origin, ev.ID, i+1
		r.confirmed = ev.Confirmed && !confirmedLaterOK
		if r.confirmed {
			r.confirmedState = r.state
		}
	}
	return r, nil
}
