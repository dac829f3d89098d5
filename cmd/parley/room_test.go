package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The rooms at the command line (OPERATOR.md): room create, list, archive; token create
// --rooms; token list naming each token's rooms.
func TestRoomCommands(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		parley(t, "room", "create", "--name", "research", "--title", "Research", "--db", url).ok(t, "room create")
		out := parley(t, "room", "create", "--db", url, "--json", "--name", "inner", "--title", "Inner «I»", "--parent", "research").ok(t, "room create --parent").stdout
		var inner struct{ ID, Name, Parent string }
		if err := json.Unmarshal([]byte(out), &inner); err != nil || inner.ID != "rm_3" || inner.Parent != "rm_2" {
			t.Errorf("room create --json printed %q (%v)", out, err)
		}
		parley(t, "room", "create", "--name", "deeper", "--title", "D", "--parent", "inner", "--db", url).
			fails(t, "a room inside an inner room", 1, "one level")
		parley(t, "room", "create", "--name", "research", "--title", "Again", "--db", url).
			fails(t, "a taken name", 1, "exists")
		parley(t, "room", "create", "--title", "No name", "--db", url).fails(t, "no name", 2, "--name")

		out = parley(t, "room", "list", "--db", url).ok(t, "room list").stdout
		for _, want := range []string{"general", "research", "inner", "Inner «I»"} {
			if !strings.Contains(out, want) {
				t.Errorf("room list does not name %q:\n%s", want, out)
			}
		}

		out = parley(t, "token", "create", "--handle", "team", "--rooms", "research,rm_1", "--json", "--db", url).ok(t, "token create --rooms").stdout
		var created struct{ Rooms []string }
		if err := json.Unmarshal([]byte(out), &created); err != nil || !slices.Equal(created.Rooms, []string{"research", "general"}) {
			t.Errorf("token create --rooms printed %q (%v)", out, err)
		}
		parley(t, "token", "create", "--handle", "lost", "--rooms", "nowhere", "--db", url).fails(t, "an unknown room", 1, "nowhere")
		parley(t, "token", "create", "--human", "ada", "--rooms", "research", "--db", url).fails(t, "a human token with rooms", 2, "every room")
		parley(t, "token", "create", "--handle", "free", "--db", url).ok(t, "token create")

		out = parley(t, "token", "list", "--json", "--db", url).ok(t, "token list --json").stdout
		var listed []struct {
			Identity string
			Rooms    []string
		}
		if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 2 {
			t.Fatalf("token list --json printed %q (%v)", out, err)
		}
		if !slices.Equal(listed[0].Rooms, []string{"research", "general"}) || listed[1].Rooms != nil {
			t.Errorf("token list --json rooms: %+v", listed)
		}
		out = parley(t, "token", "list", "--db", url).ok(t, "token list").stdout
		if !strings.Contains(out, "ROOMS") || !strings.Contains(out, "research,general") {
			t.Errorf("token list does not show the rooms:\n%s", out)
		}

		parley(t, "room", "archive", "inner", "--db", url).ok(t, "room archive")
		out = parley(t, "room", "list", "--json", "--db", url).ok(t, "room list --json").stdout
		if !strings.Contains(out, `"name":"inner","title":"Inner «I»","description":"","parent":"rm_2","archived":true`) {
			t.Errorf("room list --json after archive: %s", out)
		}
		parley(t, "room", "archive", "nowhere", "--db", url).fails(t, "archiving an unknown room", 1, "not found")
		parley(t, "export", "--room", "nowhere", "--db", url).fails(t, "export of an unknown room", 1, "not found")
		parley(t, "export", "--room", "research", "--db", url).ok(t, "export --room")
	})
}

// A room may not be named like a room's id (PROTOCOL.md § 16): rm_ and anything, in any case,
// or a number; room create says why and creates nothing, so that token create --rooms rm_9
// always means room 9.
func TestRoomCreateRefusesNamesLikeIDs(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		for _, tc := range []struct{ name, why string }{
			{"rm_9", "must not begin with rm_"},
			{"RM_9", "must not begin with rm_"},
			{"rm_research", "must not begin with rm_"},
			{"123", "must not be a number"},
		} {
			parley(t, "room", "create", "--name", tc.name, "--title", "Like an id", "--db", url).fails(t, "the name "+tc.name, 1, tc.why)
		}
		out := parley(t, "room", "list", "--json", "--db", url).ok(t, "room list --json").stdout
		if strings.Contains(out, "Like an id") {
			t.Errorf("a refused room was created: %s", out)
		}
	})
}
