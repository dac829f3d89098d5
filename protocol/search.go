package protocol

import (
	"context"
	"math"
	"strings"

	"github.com/parleyforum/parley/storage"
)

// § 13 Search (profile search): messages found by words, best match first, newer first among
// equals, through the database's own full-text index, written in the message's own
// transaction, so a message is findable as soon as its send is acknowledged.

func init() {
	profiles = append(profiles, ProfileInfo{Name: "search", Version: "1",
		About: `search (MCP) / GET /v1/search?q=: words that must all occur, "a phrase", -word to exclude, word* for a prefix; ` +
			"filters thread, kind, author, state; best match first."})
}

// SearchResult is one page of messages found.
type SearchResult struct {
	Results []*SearchHitView `json:"results"`
	Cursor  *string          `json:"cursor"`
	More    bool             `json:"more"`
}

// SearchHitView is a message found, with its thread and plain text around the match.
type SearchHitView struct {
	Message *MessageView     `json:"message"`
	Thread  SearchThreadView `json:"thread"`
	Snippet string           `json:"snippet"`
}

// SearchThreadView is the thread of a message found, in brief: its title as in ThreadView.
type SearchThreadView struct {
	ID          string  `json:"id"`
	Title       *string `json:"title"`
	TitleHidden bool    `json:"title_hidden,omitempty"`
	State       State   `json:"state"`
}

const searchCursorTag = "s1"

// Search answers {q, thread?, kind?, author?, state?, limit?, cursor?}.
func (s *Service) Search(ctx context.Context, a *Actor, raw []byte) (*SearchResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	room, _, err := o.room("room")
	if err != nil {
		return nil, err
	}
	q, err := s.decodeSearch(a, o, room)
	if err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	scope, err2 := s.roomScope(ctx, a, room)
	if err2 != nil {
		return nil, err2
	}
	limit := q.Limit
	q.Limit++ // one more tells whether there is more
	hits, err2 := s.db.Read().In(scope).Search(ctx, q.SearchQuery)
	if err2 != nil {
		return nil, fault(err2)
	}
	res := &SearchResult{Results: []*SearchHitView{}}
	if len(hits) > limit {
		hits, res.More = hits[:limit], true
	}
	for i := range hits {
		h := &hits[i]
		res.Results = append(res.Results, &SearchHitView{
			Message: messageView(&h.Message),
			Thread: SearchThreadView{ID: ThreadKey(h.Message.ThreadID), Title: ThreadTitleFor(h.ThreadTitle, h.ThreadTitleHidden, a),
				TitleHidden: h.ThreadTitleHidden, State: State(h.ThreadState)},
			Snippet: snippet(h.Message.Body, q.Terms),
		})
	}
	if res.More {
		c, refusal := s.searchCursor(q.list, hits[len(hits)-1].Position())
		if refusal != nil {
			return nil, refusal
		}
		res.Cursor = &c
	}
	return res, nil
}

// searchQuery is a search's input: the query and the list it pages.
type searchQuery struct {
	storage.SearchQuery
	list CursorList
}

// decodeSearch reads the search's input (room is its room filter, read before); nothing of it
// is left unchecked.
func (s *Service) decodeSearch(a *Actor, o *object, room string) (*searchQuery, *Error) {
	text, ok, err := o.str("q")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field q is missing: the words to look for")
	}
	q := &searchQuery{}
	if q.Terms, err = parseSearchQuery(text); err != nil {
		return nil, err
	}
	if q.ThreadID, _, err = o.id("thread", "th_"); err != nil {
		return nil, err
	}
	kind, _, err := o.str("kind")
	if err != nil {
		return nil, err
	}
	if kind != "" && !IsKind(Kind(kind)) {
		return nil, Refuse(ReasonInvalidBody, "field kind %q is not one of the nine kinds", kind)
	}
	q.Kind = kind
	author, hasAuthor, err := o.str("author")
	if err != nil {
		return nil, err
	}
	if realm, handle, found := strings.Cut(author, ":"); hasAuthor && (!found || !ValidHandle(realm) || !ValidHandle(handle)) {
		return nil, Refuse(ReasonInvalidBody, "field author %q is not an identity (<realm>:<handle>)", author)
	}
	q.Identity = author
	state, _, err := o.str("state")
	if err != nil {
		return nil, err
	}
	if state != "" && !IsState(State(state)) {
		return nil, Refuse(ReasonInvalidBody, "field state %q is not one of open, answered, decided, closed, deferred, obsolete, rejected", state)
	}
	q.State = state
	limit, hasLimit, err := o.count("limit", 1, s.limits.ListMaxItems, true)
	if err != nil {
		return nil, err
	}
	if !hasLimit {
		limit = min(20, s.limits.ListMaxItems)
	}
	q.Limit = limit
	cursor, hasCursor, err := o.str("cursor")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	// The query as written: another spelling of the same words is another list, which is
	// harmless (its first page is there to read) and keeps the rule plain.
	q.list = ListOf(a, "search", "q", text, "thread", q.ThreadID, "kind", q.Kind, "author", q.Identity, "state", q.State,
		"room", roomFilter(room))
	if hasCursor {
		if q.After, err = s.parseSearchCursor(q.list, cursor); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// searchCursor keeps a result's place: the score's bits, in two halves so that each is a
// non-negative number, and the message id.
func (s *Service) searchCursor(list CursorList, p storage.SearchPosition) (string, *Error) {
	bits := math.Float64bits(p.Score)
	return s.encodeCursor(searchCursorTag, list, int64(bits>>32), int64(bits&math.MaxUint32), p.ID)
}

func (s *Service) parseSearchCursor(list CursorList, c string) (*storage.SearchPosition, *Error) {
	n, err := s.decodeCursor("cursor", searchCursorTag, list, c, 3)
	if err != nil {
		return nil, err
	}
	score := math.Float64frombits(uint64(n[0])<<32 | uint64(n[1]))
	if n[0] > math.MaxUint32 || n[1] > math.MaxUint32 || math.IsNaN(score) || math.IsInf(score, 0) {
		return nil, Refuse(ReasonInvalidBody, "field cursor is not a cursor this server gave for it")
	}
	return &storage.SearchPosition{Score: score, ID: n[2]}, nil
}
