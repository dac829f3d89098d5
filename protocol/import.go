package protocol

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
)

// § 14, realms: claims that travel. parley import and POST /v1/imports (a human
// administrator) bring the claims of another realm's export into this forum:
//
//   - the export's proof must be by the realm key this forum trusts for the export's realm
//     (Options.TrustRealms), and so must the key of every other realm it names;
//   - every proof of the export holds (the checks of parley verify-export), and every signed
//     stance's document says what the export shows, or nothing is written;
//   - everything is written in one transaction: the claims land in one thread of this forum
//     per source thread (a new one titled after it, or the thread named), each with its
//     origin; their authors keep their realm (a human of the other realm, human:alice,
//     becomes <realm>:human.alice) and are never mapped onto local identities; signed stances
//     keep their documents and their keys their bindings, so that this forum's exports
//     carry them on;
//   - the state is recomputed by replaying the stances under this forum's rules (its own
//     verify_quorum); an imported author holds no right here, so the states are proposals
//     until a human here confirms them;
//   - claims are known by their origin and stances by theirs: importing the same export again
//     writes nothing.
//
// Supersession, the thread's messages and its events stay behind: only the claims and their
// stances travel.

// ImportResult is what an import answers: the threads the claims landed in, the claims
// written and those already here, and the stances written.
type ImportResult struct {
	Realm   string          `json:"realm"`
	Threads []string        `json:"threads"`
	Claims  []ImportedClaim `json:"claims"`
	Stances int             `json:"stances"`
	Known   int             `json:"known"`
	Keys    int             `json:"keys"`
	wrote   bool
}

// ImportedClaim is one claim of an import: its id here and its origin.
type ImportedClaim struct {
	ID     string       `json:"id"`
	Origin *ClaimOrigin `json:"origin"`
	New    bool         `json:"new"`
}

// Created reports whether the import wrote anything (201) or found everything here (200).
func (r *ImportResult) Created() bool { return r.wrote }

// Import answers POST /v1/imports: the body is the JSON export, with an optional member
// thread (th_N, the thread the claims land in), which is taken out before the export's proof
// is checked; or the jsonl dataset, as it was written.
//
// In the order of § 9: the caller's token, the body's form, then the right (a human
// administrator), then the realm and the proofs.
func (s *Service) Import(ctx context.Context, a *Actor, raw []byte) (*ImportResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	if isDataset(raw) {
		// A dataset is posted as it was written, its last line signed over every byte before
		// it: it has no member to name a thread, and its claims land as without one.
		return s.ImportExport(ctx, a, raw, 0)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, Refuse(ReasonInvalidBody, "the body must be the JSON export or the jsonl dataset (parley export --format json or jsonl)")
	}
	var threadID int64
	data := raw
	if member, ok := top["thread"]; ok {
		var ref string
		id, good := int64(0), json.Unmarshal(member, &ref) == nil
		if good {
			id, good = ParseIDString(ref, "th_")
		}
		if !good {
			return nil, Refuse(ReasonInvalidBody, "field thread must be a thread id (th_N)")
		}
		threadID = id
		delete(top, "thread")
		var err error
		if data, err = json.Marshal(top); err != nil {
			return nil, err
		}
	}
	return s.ImportExport(ctx, a, data, threadID)
}

// ImportExport imports the export data into thread threadID (0: a new thread per source
// thread), as a (the operator at the command line, or a human administrator).
func (s *Service) ImportExport(ctx context.Context, a *Actor, data []byte, threadID int64) (*ImportResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	src, refusal := readImportSource(data)
	if refusal != nil {
		return nil, refusal
	}
	return s.importSource(ctx, a, src, threadID)
}

// importSource imports what src read, after the caller's right is checked.
func (s *Service) importSource(ctx context.Context, a *Actor, src *importSource, threadID int64) (*ImportResult, error) {
	if err := s.requireAdmin(ctx, a, "imports are made by human administrators"); err != nil {
		return nil, err
	}
	plan, err := s.checkImport(ctx, src)
	if err != nil {
		return nil, err
	}
	var res *ImportResult
	ctx, cancel := writing(ctx)
	defer cancel()
	werr := s.writeTx(ctx, answering(&res, func(ctx context.Context, f *storage.Forum) error {
		w := &importTx{s: s, f: f, actor: a, src: src, plan: plan, now: storage.Now(), threads: map[string]*storage.Thread{}}
		var err error
		res, err = w.run(ctx, threadID)
		return err
	}))
	if werr != nil {
		return nil, fault(werr)
	}
	return res, nil
}

// importPlan is what the checks before the transaction found: the keys to bring, by did.
type importPlan struct {
	keys map[string]CustodyKey
}

// checkImport makes every check that needs no database: the realm is trusted, every proof
// holds, every item obeys this forum's rules (importRules), the export's realm speaks only
// for what it can vouch for (checkClaimAuthority), every signed stance says what the export
// shows.
func (s *Service) checkImport(ctx context.Context, src *importSource) (*importPlan, error) {
	refuse := func(format string, args ...any) error {
		return Refuse(ReasonInvalidBody, format, args...)
	}
	switch {
	case src.realm == "":
		return nil, refuse("the export names no realm; export it with parley export --format json")
	case src.realm == s.realm:
		return nil, refuse("the export is of realm %s, this forum's own", src.realm)
	case !src.proof:
		return nil, refuse("the export of realm %s carries no proof by its realm key", src.realm)
	}
	if err := s.trusted(src.realm, src.realmKey); err != nil {
		return nil, err
	}
	for _, name := range sortedNames(src.realms) {
		if name == s.realm {
			// This forum's own bindings came back: they hold only by its own key.
			own, err := s.RealmKey(ctx)
			if err != nil {
				return nil, fault(err)
			}
			if src.realms[name] != own.DID() {
				return nil, refuse("the export names %s as the key of realm %s, this forum's, whose key is %s", src.realms[name], name, own.DID())
			}
			continue
		}
		if err := s.trusted(name, src.realms[name]); err != nil {
			return nil, err
		}
	}
	if err := src.custodyHolds(); err != nil {
		return nil, refuse("a proof does not hold (%v); nothing was written", err)
	}
	if err := s.importRules(ctx, src); err != nil {
		return nil, err
	}
	bound := map[string]string{}
	byDID := map[string]CustodyKey{}
	for _, k := range src.keys {
		bound[k.DID], byDID[k.DID] = k.Identity, k
	}
	keyRealms := bindingRealms(src.keys)
	plan := &importPlan{keys: map[string]CustodyKey{}}
	for _, c := range src.claims {
		if c.originRealm() == s.realm {
			continue // a claim of this forum's own that went out and came back: it is here
		}
		dids, err := s.checkClaimAuthority(c, bound, keyRealms)
		if err != nil {
			return nil, err
		}
		for _, did := range dids {
			plan.keys[did] = byDID[did]
		}
	}
	return plan, nil
}

// trusted refuses a realm this forum does not trust with this key.
func (s *Service) trusted(name, key string) error {
	want, ok := s.trust[name]
	switch {
	case !ok:
		return Refuse(ReasonInvalidBody, "realm %s is not trusted here (its export names the realm key %s); trust it with --trust-realm %s=DID or PARLEY_TRUST_REALMS, after checking the key with its operators", name, key, name)
	case want != key:
		return Refuse(ReasonInvalidBody, "the export names %s as the key of realm %s, but this forum trusts %s for it", key, name, want)
	}
	return nil
}

// foreign refuses an identity of this realm: an import never speaks for local identities.
func (s *Service) foreign(identity string) error {
	realm, handle, ok := strings.Cut(identity, ":")
	switch {
	case !ok || !ValidHandle(realm) || !ValidHandle(handle):
		return fmt.Errorf("%q is not an identity", identity)
	case realm == s.realm:
		return fmt.Errorf("%s is an identity of this realm, for which an import never speaks", identity)
	}
	return nil
}

// importedIdentity is the name here of an identity of realm: an agent keeps its own
// (other:bob); a human of the other realm is <realm>:human.<name>, never a local human.
func importedIdentity(identity, realm string) string {
	if name, ok := strings.CutPrefix(identity, HumanRealm+":"); ok {
		return realm + ":human." + name
	}
	return identity
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// importTx is one import inside its transaction.
type importTx struct {
	s       *Service
	f       *storage.Forum
	actor   *Actor
	src     *importSource
	plan    *importPlan
	now     time.Time
	threads map[string]*storage.Thread // source thread → the thread here
	keyIDs  map[string]int64
}

// run writes the import.
func (w *importTx) run(ctx context.Context, threadID int64) (*ImportResult, error) {
	res := &ImportResult{Realm: w.src.realm, Threads: []string{}, Claims: []ImportedClaim{}}
	if threadID != 0 {
		t, err := w.f.ThreadForUpdate(ctx, threadID)
		if err != nil {
			return nil, notFound(err, "thread %s not found", ThreadKey(threadID))
		}
		if err := checkImportOpen(t); err != nil {
			return nil, err
		}
		for _, c := range w.src.claims {
			w.threads[c.Thread] = t
		}
	}
	if err := w.importKeys(ctx, res); err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for _, c := range w.src.claims {
		origin := c.Origin
		if origin == nil {
			origin = &ClaimOrigin{Realm: w.src.realm, Claim: c.ID, Thread: c.Thread}
		}
		if origin.Realm == w.s.realm {
			continue
		}
		claim, isNew, err := w.claim(ctx, c, origin)
		if err != nil {
			return nil, err
		}
		fresh, err := w.freshStances(ctx, c, claim, isNew)
		if err != nil {
			return nil, err
		}
		n, err := w.stances(ctx, c, claim, fresh)
		if err != nil {
			return nil, err
		}
		res.Stances += n
		if !isNew {
			res.Known++
		}
		res.Claims = append(res.Claims, ImportedClaim{ID: ClaimKey(claim.ID), Origin: claimView(claim, nil, w.now).Origin, New: isNew})
		if !seen[claim.ThreadID] {
			seen[claim.ThreadID] = true
			res.Threads = append(res.Threads, ThreadKey(claim.ThreadID))
		}
		res.wrote = res.wrote || isNew || n > 0
	}
	res.wrote = res.wrote || res.Keys > 0
	return res, nil
}

// checkImportOpen is § 12's "claims obey the thread's lock" for what an import writes.
func checkImportOpen(t *storage.Thread) error {
	if isLocked(t) {
		return Refuse(ReasonThreadClosed, "thread %s is closed and confirmed; its claims accept nothing until it is reopened", ThreadKey(t.ID))
	}
	return nil
}

// importKeys stores the keys of the signed stances with their bindings; a key another
// identity holds here is refused.
func (w *importTx) importKeys(ctx context.Context, res *ImportResult) error {
	w.keyIDs = map[string]int64{}
	for _, did := range sortedKeys(w.plan.keys) {
		k := w.plan.keys[did]
		pub, err := signed.ParseDIDKey(did)
		if err != nil {
			return Refuse(ReasonInvalidBody, "key %s: %v", did, err)
		}
		binding := string(k.Binding)
		d := did
		stored, created, err := w.f.ImportKey(ctx, &storage.SigningKey{Identity: k.Identity, PublicKey: base64.StdEncoding.EncodeToString(pub),
			DID: &d, Binding: &binding, CreatedAt: w.now})
		switch {
		case errors.Is(err, storage.ErrAlreadyExists) && stored == nil:
			return Refuse(ReasonInvalidTransition, "the key %s was stored by another import at the same time; import again, which writes only what is new", did)
		case errors.Is(err, storage.ErrAlreadyExists):
			return Refuse(ReasonInvalidTransition, "the key %s is bound to %s in realm %s, but here it is %s's; a key speaks for one identity only", did, k.Identity, w.src.realm, stored.Identity)
		}
		if err != nil {
			return err
		}
		if created {
			res.Keys++
		}
		w.keyIDs[did] = stored.ID
	}
	return nil
}

func sortedKeys(m map[string]CustodyKey) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// claim finds the claim of origin here, or writes it, unverified, in its thread, with what it
// carries: its statement, evidence, provenance, valid_until and created_at as they came, the
// import's time as origin.imported_at.
func (w *importTx) claim(ctx context.Context, c *importClaim, origin *ClaimOrigin) (*storage.Claim, bool, error) {
	known, err := w.f.ClaimByOrigin(ctx, origin.Realm, origin.Claim)
	if err == nil {
		if known.Statement != c.content.statement {
			return nil, false, Refuse(ReasonInvalidBody, "claim %s of realm %s is here as %s with another statement than the export's %s; nothing was written",
				origin.Claim, origin.Realm, ClaimKey(known.ID), c.ID)
		}
		return known, false, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return nil, false, err
	}
	t, err := w.thread(ctx, c, origin)
	if err != nil {
		return nil, false, err
	}
	if n, err := w.f.CountClaimsOf(ctx, t.ID); err != nil {
		return nil, false, err
	} else if n >= w.s.limits.ThreadMaxClaims {
		return nil, false, Refuse(ReasonLimitExceeded, "thread %s has reached thread_max_claims (%d)", ThreadKey(t.ID), w.s.limits.ThreadMaxClaims)
	}
	author := w.author(c.By)
	ct := &claimTx{s: w.s, f: w.f, actor: author, ext: c.content.ext, now: w.now, thread: t}
	via := w.src.realm
	claim := &storage.Claim{
		ThreadID: t.ID, AnchorID: *t.RootMessageID, Statement: c.content.statement,
		Identity: author.Identity, Extension: c.content.ext, AuthorKind: author.AuthorKind(),
		Evidence: encodeEvidence(c.content.evidence), ValidUntil: microseconds(c.ValidUntil),
		ProvenanceModel: c.prov.Model, ProvenanceClient: c.prov.Client,
		CreatedAt:   c.At.UTC().Truncate(time.Microsecond),
		OriginRealm: &origin.Realm, OriginClaim: &origin.Claim, OriginThread: &origin.Thread,
		OriginImportedAt: &w.now, OriginVia: &via,
	}
	ct.applyState(claim, OpAssert, nil, ClaimUnverified)
	if err := w.f.InsertClaim(ctx, claim); errors.Is(err, storage.ErrAlreadyExists) {
		return nil, false, Refuse(ReasonInvalidTransition, "claim %s of realm %s was brought in by another import at the same time; import again, which writes only what is new", origin.Claim, origin.Realm)
	} else if err != nil {
		return nil, false, err
	}
	return claim, true, ct.appendEvent(ctx, claim, OpAssert, nil, ClaimUnverified)
}

// microseconds is t in UTC to the microsecond, as the databases keep it.
func microseconds(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}

// author is the actor an imported identity acts as here: of its own realm, with no right.
func (w *importTx) author(p Party) *Actor {
	return &Actor{Identity: importedIdentity(p.Identity, w.src.realm), Rights: Rights{}}
}

// thread is the thread the claims of a source thread land in: the one named, the one an
// earlier import of that thread made, or a new one titled after it, opened by the importer.
func (w *importTx) thread(ctx context.Context, c *importClaim, origin *ClaimOrigin) (*storage.Thread, error) {
	if t, ok := w.threads[c.Thread]; ok {
		return t, nil
	}
	if id, ok, err := w.f.ThreadOfOrigin(ctx, origin.Realm, origin.Thread); err != nil {
		return nil, err
	} else if ok {
		t, err := w.f.ThreadForUpdate(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := checkImportOpen(t); err != nil {
			return nil, err
		}
		w.threads[c.Thread] = t
		return t, nil
	}
	title := w.src.threads[c.Thread]
	if title == "" {
		title = "Claims of realm " + origin.Realm
	}
	body := fmt.Sprintf("%s\n\nImported from realm %s, thread %s.", title, origin.Realm, origin.Thread)
	open := &write{s: w.s, f: w.f, actor: w.actor, env: &Envelope{Kind: KindAsk, Body: body}, now: w.now}
	sent, err := open.open(ctx)
	if err != nil {
		return nil, err
	}
	id, _ := ParseIDString(sent.Thread.ID, "th_")
	t, err := w.f.ThreadForUpdate(ctx, id)
	if err != nil {
		return nil, err
	}
	w.threads[c.Thread] = t
	return t, nil
}

// freshStances are the stances of c that claim does not hold yet. A stance is known by its
// origin (the exporting realm and its id there), by its signed document, or by its kind,
// author and time — the same stance carried by two realms' exports is one. New stances on a
// claim that was here before the import may come only from the claim's own realm's export
// or that of the realm whose export brought it (§ 14).
func (w *importTx) freshStances(ctx context.Context, c *importClaim, claim *storage.Claim, isNew bool) ([]*importStance, error) {
	if isNew {
		return c.stances, nil
	}
	held, err := w.f.StancesOf(ctx, []int64{claim.ID})
	if err != nil {
		return nil, err
	}
	var fresh []*importStance
	for _, st := range c.stances {
		known, err := w.holds(held, st)
		if err != nil {
			return nil, err
		}
		if !known {
			fresh = append(fresh, st)
		}
	}
	if len(fresh) > 0 && !w.mayChange(claim) {
		st := fresh[0]
		return nil, Refuse(ReasonInvalidBody, "claim %s here (claim %s of realm %s) came with the export of realm %s; only that export and realm %s's own change it, and this export of realm %s carries %d stances on it that are not here (%s by %s, …); nothing was written",
			ClaimKey(claim.ID), *claim.OriginClaim, *claim.OriginRealm, via(claim), *claim.OriginRealm, w.src.realm, len(fresh), st.ID, st.By.Identity)
	}
	return fresh, nil
}

// holds reports whether held has the stance st.
func (w *importTx) holds(held []storage.Stance, st *importStance) (bool, error) {
	origin := w.src.realm + ":" + st.ID
	var document string
	if st.Document != nil {
		canonical, err := signed.Canonical(st.Document)
		if err != nil {
			return false, err
		}
		document = string(canonical)
	}
	identity := importedIdentity(st.By.Identity, w.src.realm)
	for i := range held {
		h := &held[i]
		switch {
		case h.OriginStance != nil && *h.OriginStance == origin,
			document != "" && h.Proof != nil && *h.Proof == document,
			h.Kind == st.kind && h.Identity == identity && h.CreatedAt.Equal(st.At.Truncate(time.Microsecond)):
			return true, nil
		}
	}
	return false, nil
}

// mayChange reports whether this import may add to an imported claim that is here already:
// only the export of the claim's own realm, or of the realm whose export brought it.
func (w *importTx) mayChange(claim *storage.Claim) bool {
	return claim.OriginRealm != nil && (*claim.OriginRealm == w.src.realm || via(claim) == w.src.realm)
}

// via is the realm whose export brought an imported claim here.
func via(claim *storage.Claim) string {
	if claim.OriginVia != nil {
		return *claim.OriginVia
	}
	return *claim.OriginRealm
}

// stances writes the fresh stances of c, each with what it carries (its at, provenance,
// evidence and document), replaying each under this forum's rules as of its own time, and
// answers how many it wrote.
func (w *importTx) stances(ctx context.Context, c *importClaim, claim *storage.Claim, fresh []*importStance) (int, error) {
	if len(fresh) == 0 {
		return 0, nil
	}
	t, err := w.f.ThreadForUpdate(ctx, claim.ThreadID)
	if err != nil {
		return 0, err
	}
	if err := checkImportOpen(t); err != nil {
		return 0, err
	}
	written := 0
	for _, st := range fresh {
		author := w.author(st.By)
		kind := map[string]string{"attest": storage.StanceAttest, "refute": storage.StanceRefute, "verify": storage.StanceVerify}[st.kind]
		op := map[string]ClaimOp{"attest": OpAttest, "refute": OpRefute, "verify": OpVerify}[st.kind]
		if op != OpRefute {
			// Once per identity, as here: an attestation or seal by the same author that came
			// here another way (an import made before stances kept their time) is the one here.
			if has, err := w.f.HasStance(ctx, claim.ID, kind, author.Identity); err != nil {
				return 0, err
			} else if has {
				continue
			}
		}
		if n, err := w.f.CountAllStances(ctx, claim.ID); err != nil {
			return 0, err
		} else if n >= w.s.limits.ClaimMaxStances {
			return 0, Refuse(ReasonLimitExceeded, "claim %s has reached claim_max_stances (%d)", ClaimKey(claim.ID), w.s.limits.ClaimMaxStances)
		}
		origin := w.src.realm + ":" + st.ID
		stance := &storage.Stance{
			ClaimID: claim.ID, Kind: kind, Identity: author.Identity, Extension: st.By.Extension,
			AuthorKind: author.AuthorKind(), Evidence: encodeEvidence(st.content.evidence),
			Note: st.content.note, Body: st.content.body, CreatedAt: st.At.UTC().Truncate(time.Microsecond),
			ProvenanceModel: st.prov.Model, ProvenanceClient: st.prov.Client, OriginStance: &origin,
		}
		if st.Document != nil {
			doc, err := signed.Canonical(st.Document)
			if err != nil {
				return 0, err
			}
			text := string(doc)
			checked, _ := signed.Verify(st.Document) // held in checkImport
			keyID := w.keyIDs[checked[0].DID]
			stance.Proof, stance.ProofKeyID = &text, &keyID
		}
		// The rules see the claim as it was when the stance was taken: an attestation made
		// before the claim expired is one.
		facts := ClaimFacts{State: ClaimState(claim.State), Expired: Expired(claim.ValidUntil, st.At)}
		if op == OpVerify {
			if facts.Verifiers, err = w.f.CountStances(ctx, claim.ID, storage.StanceVerify); err != nil {
				return 0, err
			}
		}
		if err := w.f.InsertStance(ctx, stance); err != nil {
			return 0, err
		}
		written++
		ct := &claimTx{s: w.s, f: w.f, actor: author, ext: st.By.Extension, now: w.now, thread: t, causeStance: &stance.ID}
		next, refusal := ClaimNext(op, facts, w.s.limits.VerifyQuorum)
		if refusal != nil {
			// This forum's rules do not move the claim with this stance (a seal on a claim
			// that is not supported here yet): it is kept, and the state stays.
			next = facts.State
		}
		if err := ct.change(ctx, claim, op, facts.State, next); err != nil {
			return 0, err
		}
	}
	return written, nil
}
