package storage

import (
	"context"
	"strconv"
	"strings"
)

// SearchTerm is one term of a full-text query: words that must follow each other (one word,
// or a phrase), the last of them possibly a prefix. Words are runs of letters and digits in
// lower case, as the index splits text (see the search migration), so they need no quoting.
type SearchTerm struct {
	Words   []string
	Prefix  bool // the last word is a prefix
	Exclude bool // no message that contains the term is found
}

// SearchQuery is a search: every term not excluded must occur, none excluded may, and the
// filters narrow the messages found. After continues below a position of an earlier page.
type SearchQuery struct {
	Terms    []SearchTerm // at least one not excluded
	ThreadID int64        // 0: any
	Kind     string       // "": any
	Identity string       // "": any author
	State    string       // "": any thread state
	After    *SearchPosition
	Limit    int
}

// SearchPosition is a result's place in the order of a search: best score first, then the
// newer message.
type SearchPosition struct {
	Score float64
	ID    int64
}

// SearchHit is a message found, with its thread's title (and whether it is hidden, § 18)
// and state and its score.
type SearchHit struct {
	Message           Message `bun:"embed:m_"`
	ThreadTitle       string  `bun:"t_title"`
	ThreadTitleHidden bool    `bun:"t_title_hidden"`
	ThreadState       string  `bun:"t_state"`
	Score             float64 `bun:"score"`
}

// Position is where the hit stands in the order of its search.
func (h SearchHit) Position() SearchPosition { return SearchPosition{Score: h.Score, ID: h.Message.ID} }

// Search finds messages through the database's full-text index: on Postgres the GIN index
// of messages.search, on SQLite the FTS5 table messages_fts. The score is higher for a
// better match: Postgres's ts_rank, SQLite's bm25 negated.
func (f *Forum) Search(ctx context.Context, q SearchQuery) ([]SearchHit, error) {
	scope, err := f.resolvedScope(ctx)
	if err != nil {
		return nil, err
	}
	var matched string
	var args []any
	if f.db.kind == Postgres {
		matched = `SELECT ` + prefixedColumnList("m", (*Message)(nil)) + `, ts_rank(m.search, sq)::float8 AS score
			FROM messages AS m, to_tsquery('simple', ?) AS sq WHERE m.search @@ sq`
		args = append(args, tsquery(q.Terms))
	} else {
		// The room column weighs nothing: the score is the body's alone.
		matched = `SELECT ` + prefixedColumnList("m", (*Message)(nil)) + `, -bm25(messages_fts, 1.0, 0.0) AS score
			FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?`
		args = append(args, fts5Query(q.Terms, scope.Rooms))
	}
	// A hidden message is found by nobody (PROTOCOL.md § 18): its words are what was withdrawn.
	matched += " AND m.hidden_at IS NULL"
	var where []string
	// The scope is also a condition on the threads, on both databases: on SQLite the index's
	// room column narrows the matches to the scope's rooms first, and this condition, on the
	// threads' own rooms, is what decides.
	if cond, more := scope.ThreadCondition("m.thread_id"); cond != "" {
		matched += " AND " + cond
		args = append(args, more...)
	}
	if q.ThreadID != 0 {
		matched += " AND m.thread_id = ?"
		args = append(args, q.ThreadID)
	}
	if q.Kind != "" {
		matched += " AND m.kind = ?"
		args = append(args, q.Kind)
	}
	if q.Identity != "" {
		matched += " AND m.identity = ?"
		args = append(args, q.Identity)
	}
	if q.State != "" {
		where = append(where, "EXISTS (SELECT 1 FROM threads AS st WHERE st.id = r.m_thread_id AND st.state = ?)")
		args = append(args, q.State)
	}
	if q.After != nil {
		where = append(where, "(r.score < ? OR (r.score = ? AND r.m_id < ?))")
		args = append(args, q.After.Score, q.After.Score, q.After.ID)
	}
	page := `SELECT r.* FROM (` + matched + `) AS r`
	if len(where) > 0 {
		page += " WHERE " + strings.Join(where, " AND ")
	}
	page += " ORDER BY r.score DESC, r.m_id DESC LIMIT ?"
	args = append(args, q.Limit)
	// The threads are joined to the page alone: joined to every match, a planner that
	// expects many matches would read every thread.
	query := `SELECT p.*, t.title AS t_title, t.title_hidden AS t_title_hidden, t.state AS t_state FROM (` + page + `) AS p
		JOIN threads AS t ON t.id = p.m_thread_id ORDER BY p.score DESC, p.m_id DESC`
	var hits []SearchHit
	err = f.q.NewRaw(query, args...).Scan(ctx, &hits)
	return hits, translate(err)
}

// tsquery writes terms as a Postgres tsquery: words joined by & (followed-by <-> within a
// phrase), :* for a prefix, ! for an exclusion.
func tsquery(terms []SearchTerm) string {
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		words := make([]string, len(t.Words))
		for i, w := range t.Words {
			words[i] = "'" + w + "'"
		}
		if t.Prefix {
			words[len(words)-1] += ":*"
		}
		part := strings.Join(words, " <-> ")
		if t.Exclude {
			part = "!(" + part + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " & ")
}

// fts5Query writes terms as an FTS5 query on the body column: the wanted terms joined by
// AND, each excluded one after NOT, a phrase in double quotes, * after a prefix. With rooms
// (a scope's, resolved), it also asks for one of them in the room column (the search_rooms
// migration): none of them, and nothing can match.
func fts5Query(terms []SearchTerm, rooms []int64) string {
	var want, not []string
	for _, t := range terms {
		s := `"` + strings.Join(t.Words, " ") + `"`
		if t.Prefix {
			s += "*"
		}
		if t.Exclude {
			not = append(not, s)
		} else {
			want = append(want, s)
		}
	}
	out := "(" + strings.Join(want, " AND ") + ")"
	for _, s := range not {
		out += " NOT " + s
	}
	out = "body : (" + out + ")"
	if len(rooms) > 0 {
		names := make([]string, len(rooms))
		for i, id := range rooms {
			names[i] = `"r` + strconv.FormatInt(id, 10) + `"`
		}
		out += " AND room : (" + strings.Join(names, " OR ") + ")"
	}
	return out
}
