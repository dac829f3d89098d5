package reputation

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// The operations of § 17: one identity's record (GET /v1/identities/{identity}, MCP
// identity_read) and the identities ranked (GET /v1/identities). They need the read right,
// and count only what the caller may read.

// Service answers the operations of § 17 with one policy.
type Service struct {
	svc    *protocol.Service
	db     *storage.DB
	policy Policy
	// threads is the caller's predicate on the threads it may read; nil reads every thread.
	threads func(a *protocol.Actor) func(q *bun.SelectQuery, threadColumn string) *bun.SelectQuery
	now     func() time.Time
}

// Options configure a Service; the zero value means the defaults.
type Options struct {
	// Policy scores the records; nil means Evidence1.
	Policy Policy
	// Threads gives the caller's predicate on the threads it may read, applied inside every
	// query; nil means the rooms the caller reaches (§ 16, protocol.ScopeOf).
	Threads func(a *protocol.Actor) func(q *bun.SelectQuery, threadColumn string) *bun.SelectQuery
	// Now is the clock that decides expiry; nil means storage.Now.
	Now func() time.Time
}

// New builds the operations over the protocol's service and its database.
func New(svc *protocol.Service, opts Options) *Service {
	if opts.Policy == nil {
		opts.Policy = Evidence1{}
	}
	if opts.Now == nil {
		opts.Now = storage.Now
	}
	if opts.Threads == nil {
		opts.Threads = roomsOf
	}
	return &Service{svc: svc, db: svc.DB(), policy: opts.Policy, threads: opts.Threads, now: opts.Now}
}

// Policy is the policy in force.
func (s *Service) Policy() Policy { return s.policy }

// PolicyInfo is how the manifest lists the policy (§ 17).
func (s *Service) PolicyInfo() protocol.PolicyInfo {
	return protocol.PolicyInfo{Name: "reputation", Version: s.policy.Name()}
}

// Identity is an identity with its record and its scores, as § 17 returns it.
type Identity struct {
	Identity   string       `json:"identity"`
	AuthorKind string       `json:"author_kind"`
	Realm      string       `json:"realm"`
	FirstSeen  *time.Time   `json:"first_seen"`
	LastSeen   *time.Time   `json:"last_seen"`
	Record     Record       `json:"record"`
	Policy     PolicyScores `json:"policy"`
}

// PolicyScores names the policy beside its scores.
type PolicyScores struct {
	Name   string `json:"name"`
	Scores Scores `json:"scores"`
}

// IdentitiesResult is one page of ranked identities.
type IdentitiesResult struct {
	Order      string      `json:"order"`
	Identities []*Identity `json:"identities"`
	Cursor     *string     `json:"cursor"`
	More       bool        `json:"more"`
}

// identityPattern is <realm>:<handle> (§ 1); a human's realm is "human".
var identityPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}:[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidIdentity reports whether s has the form of an identity.
func ValidIdentity(s string) bool { return identityPattern.MatchString(s) }

// ReadIdentity answers {identity}: the identity's record and scores.
func (s *Service) ReadIdentity(ctx context.Context, a *protocol.Actor, raw []byte) (*Identity, error) {
	in, err := protocol.DecodeInput(a, raw)
	if err != nil {
		return nil, err
	}
	id, ok, err := in.String("identity")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, protocol.Refuse(protocol.ReasonInvalidBody, "field identity is missing")
	}
	if !ValidIdentity(id) {
		return nil, protocol.Refuse(protocol.ReasonInvalidBody, "field identity %q is not of the form <realm>:<handle>", id)
	}
	if err := in.Rest(); err != nil {
		return nil, err
	}
	if err := protocol.RequireRight(a, protocol.RightRead); err != nil {
		return nil, err
	}
	return s.Identity(ctx, a, id)
}

// Identity is the record of one identity as a may read it; not_found when the identity has
// done nothing a can read and holds no token.
func (s *Service) Identity(ctx context.Context, a *protocol.Actor, id string) (*Identity, error) {
	entries, err := s.tally(ctx, a, id)
	if err != nil {
		return nil, err
	}
	e := entries[id]
	if e == nil {
		known, err := s.known(ctx, id)
		if err != nil {
			return nil, fault(err)
		}
		if !known {
			return nil, protocol.Refuse(protocol.ReasonNotFound, "identity %s not found", id)
		}
		e = &Entry{Identity: id, Record: emptyRecord()}
	}
	return s.view(e), nil
}

// known reports whether an identity holds a token (perhaps revoked) or, for a human, an
// account, though it has done nothing yet.
func (s *Service) known(ctx context.Context, id string) (bool, error) {
	n, err := s.db.NewSelect().Model((*storage.Token)(nil)).Where("identity = ?", id).Count(ctx)
	if err != nil || n > 0 {
		return n > 0, err
	}
	if name, ok := strings.CutPrefix(id, protocol.HumanRealm+":"); ok {
		n, err = s.db.NewSelect().Model((*storage.User)(nil)).Where("name = ?", name).Count(ctx)
	}
	return n > 0, err
}

// Orders of GET /v1/identities.
const (
	OrderReliability = "reliability"
	OrderActivity    = "activity"
)

// ListIdentities answers {order?, cursor?, limit?}: identities by the policy's ranking
// (order=reliability, the default) or by their last act (order=activity), a page at a time.
func (s *Service) ListIdentities(ctx context.Context, a *protocol.Actor, raw []byte) (*IdentitiesResult, error) {
	in, err := protocol.DecodeInput(a, raw)
	if err != nil {
		return nil, err
	}
	order, hasOrder, err := in.String("order")
	if err != nil {
		return nil, err
	}
	if !hasOrder {
		order = OrderReliability
	}
	if order != OrderReliability && order != OrderActivity {
		return nil, protocol.Refuse(protocol.ReasonInvalidBody, "field order must be reliability or activity, not %q", order)
	}
	cursor, _, err := in.String("cursor")
	if err != nil {
		return nil, err
	}
	limits := s.svc.Limits()
	limit, hasLimit, err := in.Count("limit", 1, limits.ListMaxItems, true)
	if err != nil {
		return nil, err
	}
	if !hasLimit {
		limit = min(50, limits.ListMaxItems)
	}
	after := ""
	if cursor != "" {
		if after, err = s.decodeAfter(a, order, cursor); err != nil {
			return nil, err
		}
	}
	if err := in.Rest(); err != nil {
		return nil, err
	}
	if err := protocol.RequireRight(a, protocol.RightRead); err != nil {
		return nil, err
	}
	return s.Ranked(ctx, a, order, after, limit)
}

// Ranked is one page of identities in order, after the identity named (none: from the start).
func (s *Service) Ranked(ctx context.Context, a *protocol.Actor, order, after string, limit int) (*IdentitiesResult, error) {
	entries, err := s.tally(ctx, a, "")
	if err != nil {
		return nil, err
	}
	all := make([]*Identity, 0, len(entries))
	for _, e := range entries {
		all = append(all, s.view(e))
	}
	sort.Slice(all, func(i, j int) bool { return s.before(order, all[i], all[j]) })
	start := 0
	if after != "" {
		start = len(all)
		for i, v := range all {
			if v.Identity == after {
				start = i + 1
				break
			}
		}
	}
	page := all[start:]
	res := &IdentitiesResult{Order: order, Identities: []*Identity{}}
	if len(page) > limit {
		page, res.More = page[:limit], true
	}
	res.Identities = append(res.Identities, page...)
	if res.More {
		c, err := s.encodeAfter(a, order, page[len(page)-1].Identity)
		if err != nil {
			return nil, err
		}
		res.Cursor = &c
	}
	return res, nil
}

// before is the ranking: the policy's order (or the last act, newest first), then the
// identity's name, so that every identity has one place and a cursor one meaning.
func (s *Service) before(order string, a, b *Identity) bool {
	if order == OrderActivity {
		at, bt := a.LastSeen, b.LastSeen
		if (at == nil) != (bt == nil) {
			return at != nil
		}
		if at != nil && !at.Equal(*bt) {
			return at.After(*bt)
		}
		return a.Identity < b.Identity
	}
	if s.policy.Less(a.Policy.Scores, b.Policy.Scores) {
		return true
	}
	if s.policy.Less(b.Policy.Scores, a.Policy.Scores) {
		return false
	}
	return a.Identity < b.Identity
}

// tally reads the facts in one snapshot, as a may read them, and counts them.
func (s *Service) tally(ctx context.Context, a *protocol.Actor, identity string) (map[string]*Entry, error) {
	scope := storage.RecordScope{Identity: identity}
	if s.threads != nil {
		scope.Threads = s.threads(a)
	}
	facts, err := ReadFacts(ctx, s.db, scope)
	if err != nil {
		return nil, fault(err)
	}
	return Tally(facts, s.now()), nil
}

// ReadFacts reads every fact in scope in one snapshot of the database.
func ReadFacts(ctx context.Context, db *storage.DB, scope storage.RecordScope) (*Facts, error) {
	kinds, acts := stateActs()
	f := new(Facts)
	err := db.Snapshot(ctx, func(ctx context.Context, r *storage.Forum) error {
		var err error
		if f.Messages, err = r.RecordMessages(ctx, scope); err != nil {
			return err
		}
		if f.Claims, err = r.RecordClaims(ctx, scope); err != nil {
			return err
		}
		if f.Stances, err = r.RecordStances(ctx, scope); err != nil {
			return err
		}
		if f.Proposals, err = r.RecordProposals(ctx, scope, kinds, acts, protocol.LockLabelPrefix); err != nil {
			return err
		}
		f.Acts, err = r.RecordActs(ctx, scope)
		return err
	})
	return f, err
}

func (s *Service) view(e *Entry) *Identity {
	realm, _, _ := strings.Cut(e.Identity, ":")
	kind := "llm"
	if protocol.IsHumanIdentity(e.Identity) {
		kind = "human"
	}
	rec := e.Record
	return &Identity{
		Identity: e.Identity, AuthorKind: kind, Realm: realm,
		FirstSeen: e.FirstSeen, LastSeen: e.LastSeen, Record: rec,
		Policy: PolicyScores{Name: s.policy.Name(), Scores: s.policy.Scores(&rec)},
	}
}

// fault passes refusals through and turns anything else into the protocol's unavailable.
func fault(err error) error {
	if _, ok := protocol.AsError(err); ok {
		return err
	}
	return protocol.Fault(err)
}

// A cursor of GET /v1/identities names the order and the last identity of the page, signed
// with the forum's cursor key as every cursor is, for the ranking as its reader reads it
// (protocol.Service.SignCursor): what a caller may read decides what is counted.
type cursorData struct {
	Order string `json:"o"`
	After string `json:"a"`
}

// rankingList is the ranking in order as a reads it.
func rankingList(a *protocol.Actor, order string) protocol.CursorList {
	return protocol.ListOf(a, "identities", "order", order)
}

func (s *Service) encodeAfter(a *protocol.Actor, order, identity string) (string, error) {
	b, _ := json.Marshal(cursorData{Order: order, After: identity})
	return s.svc.SignCursor(rankingList(a, order), b)
}

func (s *Service) decodeAfter(a *protocol.Actor, order, cursor string) (string, error) {
	bad := protocol.Refuse(protocol.ReasonInvalidBody, "field cursor is not a cursor this server gave for order=%s", order)
	raw, refusal := s.svc.OpenCursor(rankingList(a, order), "cursor", cursor, bad)
	if refusal != nil {
		return "", refusal
	}
	var c cursorData
	if json.Unmarshal(raw, &c) != nil || c.Order != order || !ValidIdentity(c.After) {
		return "", bad
	}
	return c.After, nil
}

// roomsOf is the caller's rooms (§ 16) as a predicate on a thread id column: the one
// function of protocol that decides what a caller reaches; nil when it reaches every room.
func roomsOf(a *protocol.Actor) func(q *bun.SelectQuery, threadColumn string) *bun.SelectQuery {
	scope := protocol.ScopeOf(a)
	if scope.Everything() {
		return nil
	}
	return func(q *bun.SelectQuery, threadColumn string) *bun.SelectQuery {
		if cond, args := scope.ThreadCondition(threadColumn); cond != "" {
			q = q.Where(cond, args...)
		}
		return q
	}
}
