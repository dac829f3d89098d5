package protocol

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
)

// § 19 "Cursors belong to their list": a cursor is a place in one list — one thread's events,
// one query's results, the threads of one state and room, as one caller reads them — and
// means nothing in another. Used there it would skip or repeat rows without a word, so each
// cursor carries the digest of the list it came from (cursor.go signs it with the rest), and
// a cursor of another list is refused as invalid_body.

// CursorList names the list a cursor pages, as the digest that cursors carry.
type CursorList struct{ digest string }

// cursorListDigestBytes is how much of the list's SHA-256 a cursor carries: enough that two
// lists of one forum never share it by chance; the MAC, not the digest, makes it unforgeable.
const cursorListDigestBytes = 12

// cursorListDigestChars is the digest's length in base64url, and cursorListEnd the byte that
// ends it in a cursor.
const (
	cursorListDigestChars = (cursorListDigestBytes*8 + 5) / 6
	cursorListEnd         = '|'
)

// ListOf names the list that a pages: what it is (a name such as "inbox" or "search"), then
// its filters as pairs of a name and a value (the thread, the query, the state, the room as
// the request names it; a filter not given is its zero value), read by a's identity within
// the rooms its token is scoped to. The same call with the same values names the same list.
func ListOf(a *Actor, what string, filters ...any) CursorList {
	reader := []any{what, "", []int64(nil)}
	if a != nil {
		reader[1] = a.Identity
		if a.Scoped() {
			reader[2] = slices.Sorted(slices.Values(a.Rooms))
		}
	}
	// JSON keeps every part apart whatever text it holds, so no two lists read alike; the
	// values are strings, numbers and lists of them, which it always encodes.
	data, _ := json.Marshal(append(reader, filters...))
	sum := sha256.Sum256(data)
	return CursorList{digest: base64.RawURLEncoding.EncodeToString(sum[:cursorListDigestBytes])}
}

// roomFilter is a room filter as a list names it: rm_<n> for a room named by its id (however
// written), the name for one named by its name, "" for none. A room's name never looks like
// its id (§ 16), so the two forms never name two rooms alike.
func roomFilter(ref string) string {
	if ref == "" {
		return ""
	}
	if id, name, ok := ParseRoomRef(ref); ok && id != 0 {
		return RoomKey(id)
	} else if ok {
		return name
	}
	return ref
}
