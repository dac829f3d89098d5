package protocol

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/parleyforum/parley/storage"
)

// Cursors are opaque to clients: the digest of the list they page, a tag for what they page,
// then numbers, and an HMAC-SHA256 of all of it under the forum's cursor key, all in
// base64url. The key is kept in the database (made by its migration, or here on first use;
// one insert-if-absent, so that concurrent first starts agree on one key), so every instance
// of one forum signs and checks alike. A cursor the server never gave — another tag, another
// form, numbers edited, a cursor from before cursors were signed — is refused as
// invalid_body, never guessed at; so is a cursor of another list (§ 19 "Cursors belong to
// their list"), and one from before cursors named their list.

// cursorMACBytes is how much of the HMAC a cursor carries: 128 bits.
const cursorMACBytes = 16

// cursorKeyCache holds the cursor key once it is known: it never changes for a database, so
// after the first read every cursor is signed and checked without a lock.
type cursorKeyCache struct {
	mu  sync.Mutex // one reader of the database at a time
	key atomic.Pointer[[]byte]
}

// cursorKey is the forum's cursor key, read from the database (or made there) on first use,
// within the deadline of one request's database work. While it cannot be read, every
// operation with a cursor is unavailable; so is it while the key kept is not 32 bytes of
// base64 (the refusal's message names the setting).
func (s *Service) cursorKey() ([]byte, *Error) {
	if key := s.cursors.key.Load(); key != nil {
		return *key, nil
	}
	s.cursors.mu.Lock()
	defer s.cursors.mu.Unlock()
	if key := s.cursors.key.Load(); key != nil {
		return *key, nil
	}
	unavailable := Refuse(ReasonUnavailable, "the database cannot be reached or did not answer in time; retry later")
	if s.db == nil {
		return nil, unavailable
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.deadline)
	defer cancel()
	encoded, _, err := s.db.SettingOrCreate(ctx, storage.SettingCursorKey, newCursorKey)
	if err != nil {
		return nil, unavailable
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) < 32 {
		return nil, Refuse(ReasonUnavailable, "the cursor key kept in the database (setting %s) is not the base64 of 32 bytes", storage.SettingCursorKey)
	}
	s.cursors.key.Store(&key)
	return key, nil
}

// newCursorKey makes 32 random bytes, base64.
func newCursorKey() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(key), nil
}

// SignCursor makes a cursor of payload for the list it pages, for a page of another package
// (reputation's ranking): the list's digest and the payload, signed.
func (s *Service) SignCursor(list CursorList, payload []byte) (string, error) {
	c, refusal := s.signCursor(list, payload)
	if refusal != nil {
		return "", refusal
	}
	return c, nil
}

func (s *Service) signCursor(list CursorList, payload []byte) (string, *Error) {
	key, refusal := s.cursorKey()
	if refusal != nil {
		return "", refusal
	}
	signed := append(append([]byte(list.digest), cursorListEnd), payload...)
	m := hmac.New(sha256.New, key)
	m.Write(signed)
	return base64.RawURLEncoding.EncodeToString(append(signed, m.Sum(nil)[:cursorMACBytes]...)), nil
}

// OpenCursor gives back the payload of a cursor SignCursor made for list; bad is the refusal
// for any other string, and a cursor of another list is refused as such (field names the
// field it came in). A key that cannot be read is unavailable.
func (s *Service) OpenCursor(list CursorList, field, cursor string, bad *Error) ([]byte, *Error) {
	key, refusal := s.cursorKey()
	if refusal != nil {
		return nil, refusal
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) <= cursorMACBytes {
		return nil, bad
	}
	signed, mac := raw[:len(raw)-cursorMACBytes], raw[len(raw)-cursorMACBytes:]
	m := hmac.New(sha256.New, key)
	m.Write(signed)
	if !hmac.Equal(mac, m.Sum(nil)[:cursorMACBytes]) {
		return nil, bad
	}
	digest, payload, named := bytes.Cut(signed, []byte{cursorListEnd})
	if !named || len(digest) != cursorListDigestChars {
		// Signed with this forum's key, but from before cursors named their list.
		return nil, Refuse(ReasonInvalidBody, "field %s is a cursor from an earlier version of this server, which did not name its list; read the list again from its start, without %s", field, field)
	}
	if string(digest) != list.digest {
		return nil, Refuse(ReasonInvalidBody, "field %s is a cursor of another list: a cursor continues only the list it came from "+
			"(the same thread, query and filters, read with the same identity and rooms); read this list from its start, without %s", field, field)
	}
	return payload, nil
}

func (s *Service) encodeCursor(tag string, list CursorList, nums ...int64) (string, *Error) {
	parts := []string{tag}
	for _, n := range nums {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	return s.signCursor(list, []byte(strings.Join(parts, ".")))
}

func (s *Service) decodeCursor(field, tag string, list CursorList, cursor string, count int) ([]int64, *Error) {
	bad := Refuse(ReasonInvalidBody, "field %s is not a cursor this server gave for it", field)
	raw, refusal := s.OpenCursor(list, field, cursor, bad)
	if refusal != nil {
		return nil, refusal
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

func (s *Service) inboxCursor(list CursorList, p storage.Position) (string, *Error) {
	return s.encodeCursor(inboxCursorTag, list, p.Tx, p.Seq)
}

func (s *Service) parseInboxCursor(field string, list CursorList, c string) (storage.Position, *Error) {
	n, err := s.decodeCursor(field, inboxCursorTag, list, c, 2)
	if err != nil {
		return storage.Position{}, err
	}
	return storage.Position{Tx: n[0], Seq: n[1]}, nil
}

// afterCursor reads the cursor of a page that continues after one row's id (tag names what
// it pages); no cursor means from the start, 0.
func (s *Service) afterCursor(tag string, list CursorList, cursor string) (int64, *Error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := s.decodeCursor("cursor", tag, list, cursor, 1)
	if err != nil {
		return 0, err
	}
	return n[0], nil
}
