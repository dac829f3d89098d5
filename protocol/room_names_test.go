package protocol_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 16: a room's name is a handle-like slug that never reads as a room's id — not rm_ and
// anything (in any case), not a number — since a reference of that form names a room by its
// id and such a room would never be found by its name. Each refusal is invalid_body with a
// message that says what is wrong and a detail the pages say in the reader's language, and
// creates nothing.
func TestRoomNames(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		if _, err := db.CreateAdmin(ctx, "root", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		svc, admin := newService(t, db), human("root")
		for _, tc := range []struct {
			name, detail, says string // detail "": created
		}{
			{"rm_9", "room_name_id", "must not begin with rm_"},
			{"RM_9", "room_name_id", "must not begin with rm_"},
			{"Rm_2", "room_name_id", "must not begin with rm_"},
			{"rm_", "room_name_id", "must not begin with rm_"},
			{"rm_research", "room_name_id", "must not begin with rm_"},
			{"123", "room_name_number", "must not be a number"},
			{"0", "room_name_number", "must not be a number"},
			{"Research", "room_name_pattern", "must match"},
			{"", "room_name_pattern", "must match"},
			{"-x", "room_name_pattern", "must match"},
			{strings.Repeat("a", 65), "room_name_pattern", "must match"},
			{"research", "", ""},
			{"rm", "", ""},
			{"rm9", "", ""},
			{"rm-9", "", ""},
			{"r_9", "", ""},
			{"9a", "", ""},
			{"research", "room_name_taken", "a room named research exists"},
		} {
			_, err := svc.CreateRoom(ctx, admin, []byte(jsonOf(map[string]any{"name": tc.name, "title": "A room"})))
			if tc.detail == "" {
				if err != nil {
					t.Errorf("room %q: %v", tc.name, err)
				}
				continue
			}
			e := wantRefused(t, err, protocol.ReasonInvalidBody)
			if e.Detail != tc.detail || !strings.Contains(e.Message, tc.says) {
				t.Errorf("room %q: refused %q (detail %q), want %q (%s)", tc.name, e.Message, e.Detail, tc.says, tc.detail)
			}
		}
		rooms, err := svc.ListRooms(ctx, admin, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rooms.Rooms); n != 7 { // general and the six created
			t.Errorf("%d rooms after the refusals, want 7", n)
		}
	})
}

// The pages' input pattern for a room's name (with maxlength 64) takes exactly the names
// CheckRoomName takes: every name of up to five characters from the letters that matter, and
// a few long ones.
func TestRoomNamePatternAgrees(t *testing.T) {
	pattern := regexp.MustCompile(`^(?:` + protocol.RoomNamePattern + `)$`)
	alphabet := []string{"r", "m", "_", "a", "0", "9", "-", ".", "R", "M", "é"}
	names := []string{strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("1", 64), strings.Repeat("1", 63) + "x"}
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		names = append(names, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1)
		}
	}
	grow("", 5)
	for _, name := range names {
		browser := pattern.MatchString(name) && len([]rune(name)) <= 64
		if server := protocol.CheckRoomName(name) == nil; browser != server {
			t.Errorf("name %q: the pattern takes it %v, CheckRoomName %v", name, browser, server)
		}
	}
}
