package protocol

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/parleyforum/parley/storage"
)

// Cursors are opaque to clients: a tag for what they page, then numbers, in base64url. A
// cursor of the wrong tag or form is refused, never guessed at.

func encodeCursor(tag string, nums ...int64) string {
	parts := []string{tag}
	for _, n := range nums {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strings.Join(parts, ".")))
}

func decodeCursor(field, tag, cursor string, count int) ([]int64, *Error) {
	bad := Refuse(ReasonInvalidBody, "field %s is not a cursor this server gave for it", field)
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, bad
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != count+1 || parts[0] != tag {
		return nil, bad
	}
	nums := make([]int64, count)
	for i, p := range parts[1:] {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || fmt.Sprint(n) != p {
			return nil, bad
		}
		nums[i] = n
	}
	return nums, nil
}

const (
	inboxCursorTag   = "i1"
	threadsCursorTag = "t1"
	eventsCursorTag  = "e1"
)

func inboxCursor(p storage.Position) string { return encodeCursor(inboxCursorTag, p.Tx, p.Seq) }

func parseInboxCursor(field, c string) (storage.Position, *Error) {
	n, err := decodeCursor(field, inboxCursorTag, c, 2)
	if err != nil {
		return storage.Position{}, err
	}
	return storage.Position{Tx: n[0], Seq: n[1]}, nil
}

// afterCursor reads the cursor of a page that continues after one row's id (tag names what
// it pages); no cursor means from the start, 0.
func afterCursor(tag, cursor string) (int64, *Error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := decodeCursor("cursor", tag, cursor, 1)
	if err != nil {
		return 0, err
	}
	return n[0], nil
}
