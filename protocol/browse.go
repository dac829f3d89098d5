package protocol

import (
	"context"
	"time"

	"github.com/parleyforum/parley/storage"
)

// The reading the pages need beyond § 7's list: threads by their last activity, filtered by
// state and by whether a human still has to confirm them, and the queue of proposals. Same
// checks as every read (the read right), same views.

// BrowseQuery asks for one page of threads, the newest activity first.
type BrowseQuery struct {
	State       State  // "" for every state
	Unconfirmed bool   // only threads whose state is an unconfirmed proposal
	Cursor      string // from the previous page; "" for the first
	Limit       int    // 0 for the default page; clamped to list_max_items
	Room        string // a room (rm_<n>, <n> or name) and its inner rooms; "" for every room
}

// Browse answers one page of threads, the newest activity first.
func (s *Service) Browse(ctx context.Context, a *Actor, q BrowseQuery) (*ListThreadsResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	if q.State != "" && !IsState(q.State) {
		return nil, Refuse(ReasonInvalidBody, "field state %q is not one of open, answered, decided, closed, deferred, obsolete, rejected", q.State)
	}
	list := ListOf(a, "threads_by_activity", "state", q.State, "unconfirmed", q.Unconfirmed, "room", roomFilter(q.Room))
	var after *storage.ActivityCursor
	if q.Cursor != "" {
		n, err := s.decodeCursor("cursor", activityCursorTag, list, q.Cursor, 2)
		if err != nil {
			return nil, err
		}
		after = &storage.ActivityCursor{UpdatedAt: time.UnixMicro(n[0]).UTC(), ID: n[1]}
	}
	limit := s.pageSize(q.Limit)
	scope, err := s.roomScope(ctx, a, q.Room)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Read().In(scope).ThreadsByActivity(ctx, string(q.State), q.Unconfirmed, after, limit+1)
	if err != nil {
		return nil, fault(err)
	}
	return threadsPage(rows, limit, a, func(last *storage.Thread) (string, *Error) {
		return s.encodeCursor(activityCursorTag, list, last.UpdatedAt.UnixMicro(), last.ID)
	})
}

// threadsPage is a page of threads from rows read with one more than limit, as reader reads
// them: the extra row says that there is more, and cursor names the page's last thread for
// the next read.
func threadsPage(rows []storage.Thread, limit int, reader *Actor, cursor func(last *storage.Thread) (string, *Error)) (*ListThreadsResult, error) {
	res := &ListThreadsResult{Threads: []*ThreadView{}}
	if len(rows) > limit {
		rows, res.More = rows[:limit], true
	}
	for i := range rows {
		res.Threads = append(res.Threads, threadViewFor(&rows[i], reader))
	}
	if res.More {
		c, err := cursor(&rows[len(rows)-1])
		if err != nil {
			return nil, err
		}
		res.Cursor = &c
	}
	return res, nil
}

// Proposal is a thread whose state a model proposed, with the event that proposed it and
// the message that carried it (nil when the event came without one), so that a moderator
// can judge the proposal where it is listed.
type Proposal struct {
	Thread  *ThreadView  `json:"thread"`
	Event   *EventView   `json:"event"`
	Message *MessageView `json:"message,omitempty"`
}

// ProposalsResult is one page of the moderation queue, the oldest proposal first.
type ProposalsResult struct {
	Proposals []Proposal `json:"proposals"`
	Cursor    *string    `json:"cursor"`
	More      bool       `json:"more"`
}

// Proposals answers one page of the unconfirmed proposals across the forum, oldest first:
// what a human or a lock holder has left to confirm or re-mark (§ 5).
func (s *Service) Proposals(ctx context.Context, a *Actor, cursor string, limit int) (*ProposalsResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	list := ListOf(a, "proposals")
	after, refusal := s.afterCursor(proposalsCursorTag, list, cursor)
	if refusal != nil {
		return nil, refusal
	}
	limit = s.pageSize(limit)
	read := s.reader(a)
	rows, err := read.Proposals(ctx, after, limit+1)
	if err != nil {
		return nil, fault(err)
	}
	res := &ProposalsResult{Proposals: []Proposal{}}
	if len(rows) > limit {
		rows, res.More = rows[:limit], true
	}
	ids := make([]int64, 0, len(rows))
	for _, t := range rows {
		ids = append(ids, *t.StateEventID) // a proposal always has the event that made it
	}
	events, err := read.EventsByID(ctx, ids)
	if err != nil {
		return nil, fault(err)
	}
	byID := make(map[int64]*storage.Event, len(events))
	for i := range events {
		byID[events[i].ID] = &events[i]
	}
	messages, err := proposingMessages(ctx, read, events)
	if err != nil {
		return nil, fault(err)
	}
	for i := range rows {
		p := Proposal{Thread: threadViewFor(&rows[i], a)}
		if ev, ok := byID[*rows[i].StateEventID]; ok {
			p.Event = eventView(ev)
			if ev.MessageID != nil {
				p.Message = messages[*ev.MessageID]
			}
		}
		res.Proposals = append(res.Proposals, p)
	}
	if res.More {
		c, err := s.encodeCursor(proposalsCursorTag, list, *rows[len(rows)-1].StateEventID)
		if err != nil {
			return nil, err
		}
		res.Cursor = &c
	}
	return res, nil
}

// proposingMessages reads, in one query, the messages that made the given events, by id.
func proposingMessages(ctx context.Context, read *storage.Forum, events []storage.Event) (map[int64]*MessageView, error) {
	ids := make([]int64, 0, len(events))
	for _, ev := range events {
		if ev.MessageID != nil {
			ids = append(ids, *ev.MessageID)
		}
	}
	rows, err := read.MessagesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*MessageView, len(rows))
	for i := range rows {
		out[rows[i].ID] = messageView(&rows[i])
	}
	return out, nil
}

// pageSize is the size of a page asked for: the default page when none, at most
// list_max_items.
func (s *Service) pageSize(limit int) int {
	if limit <= 0 {
		limit = 50
	}
	return min(limit, s.limits.ListMaxItems)
}

const (
	activityCursorTag  = "a1"
	proposalsCursorTag = "p1"
)

// PublicReader is the actor of a reader who is not signed in, on an instance whose operator
// opened reading to everyone: it may read and nothing else, and it is no identity anybody
// can speak as.
func PublicReader() *Actor {
	return &Actor{Identity: "public:reader", Rights: Rights{RightRead: true}}
}

// LockLabels names, of the given identities, those that hold the lock right now, with their
// moderation label (§ 1: shown as "KI · <label>"): what the pages show beside a moderator's
// messages. An identity with several live lock tokens shows the newest one's label.
func (s *Service) LockLabels(ctx context.Context, a *Actor, identities []string) (map[string]string, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	tokens, err := s.db.LiveTokensOf(ctx, identities)
	if err != nil {
		return nil, fault(err)
	}
	labels := map[string]string{}
	for i := range tokens {
		if actor := ActorOfToken(&tokens[i]); actor.Rights.Has(RightLock) && !actor.Human {
			labels[actor.Identity] = actor.ModerationLabel()
		}
	}
	return labels, nil
}
