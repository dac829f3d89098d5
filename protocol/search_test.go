package protocol_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// § 13 Search: the query language, the filters and the refusals, the same on both databases.

// search runs a search that must succeed.
func search(t *testing.T, svc *protocol.Service, a *protocol.Actor, req map[string]any) *protocol.SearchResult {
	t.Helper()
	res, err := svc.Search(context.Background(), a, []byte(jsonOf(req)))
	if err != nil {
		t.Fatalf("search %s: %v", jsonOf(req), err)
	}
	return res
}

// foundIDs are the ids of the messages found, in the order found.
func foundIDs(res *protocol.SearchResult) []string {
	ids := []string{}
	for _, r := range res.Results {
		ids = append(ids, r.Message.ID)
	}
	return ids
}

func TestSearchFindsByTheQueryLanguage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob, carol := agent("alice", "read,write"), agent("bob", "read,write"), agent("carol", "read,write")
		ask1 := send(t, svc, alice, envelope("ask", "", "How does the inbox cursor work?"))
		th1, m1 := ask1.Thread.ID, ask1.Message.ID
		m2 := send(t, svc, bob, envelope("answer", th1, "The cursor is an opaque position; it never skips a commit.")).Message.ID
		ask2 := send(t, svc, carol, envelope("ask", "", "Which port does parley serve listen on by default?"))
		th2, m3 := ask2.Thread.ID, ask2.Message.ID
		m4 := send(t, svc, bob, envelope("answer", th2, "8080 on loopback, the default port.")).Message.ID
		m5 := send(t, svc, alice, envelope("note", th2, "Résumé: ports and cursors are documented")).Message.ID
		ask3 := send(t, svc, carol, envelope("ask", "", "E-mail delivery of notifications?"))
		th3, m6 := ask3.Thread.ID, ask3.Message.ID
		m7 := send(t, svc, alice, envelope("note", th3, "Version v1.2 at a@b.com, see x/y; -5 degrees, 4242.3 and foo_bar")).Message.ID
		mustModerate(t)(mark(svc, human("ada"), th2, protocol.StateClosed))

		cases := []struct {
			name string
			req  map[string]any
			want []string // as a set: the order of unequal matches is each database's score
		}{
			{"a word", map[string]any{"q": "cursor"}, []string{m1, m2}},
			{"case-insensitive", map[string]any{"q": "CuRsOr"}, []string{m1, m2}},
			{"no stemming", map[string]any{"q": "cursors"}, []string{m5}},
			{"every word must occur", map[string]any{"q": "port default"}, []string{m3, m4}},
			{"a word that does not occur", map[string]any{"q": "port nowhere"}, nil},
			{"a prefix", map[string]any{"q": "cursor*"}, []string{m1, m2, m5}},
			{"an exclusion", map[string]any{"q": "cursor -skips"}, []string{m1}},
			{"an excluded phrase", map[string]any{"q": `cursor* -"opaque position"`}, []string{m1, m5}},
			{"a phrase", map[string]any{"q": `"opaque position"`}, []string{m2}},
			{"a phrase in the wrong order", map[string]any{"q": `"position opaque"`}, nil},
			{"a phrase with a prefix", map[string]any{"q": `"opaque pos"*`}, []string{m2}},
			{"letters beyond ASCII", map[string]any{"q": "RÉSUMÉ"}, []string{m5}},
			{"a word with a hyphen is its parts in a row", map[string]any{"q": "e-mail"}, []string{m6}},
			{"a part of such a word", map[string]any{"q": "mail"}, []string{m6}},
			{"numbers", map[string]any{"q": "8080"}, []string{m4}},
			{"punctuation inside a run splits it: a version", map[string]any{"q": "v1.2"}, []string{m7}},
			{"a version's part", map[string]any{"q": "v1"}, []string{m7}},
			{"an address's part", map[string]any{"q": "b com"}, []string{m7}},
			{"a path's part", map[string]any{"q": "y"}, []string{m7}},
			{"a signed number", map[string]any{"q": "5 degrees"}, []string{m7}},
			{"a decimal's part", map[string]any{"q": "4242"}, []string{m7}},
			{"an underscore", map[string]any{"q": `"foo bar"`}, []string{m7}},
			{"punctuation only separates", map[string]any{"q": "port, default!"}, []string{m3, m4}},
			{"filter thread", map[string]any{"q": "cursor*", "thread": th2}, []string{m5}},
			{"filter thread, bare number", map[string]any{"q": "cursor*", "thread": strings.TrimPrefix(th1, "th_")}, []string{m1, m2}},
			{"filter kind", map[string]any{"q": "cursor*", "kind": "answer"}, []string{m2}},
			{"filter author", map[string]any{"q": "cursor*", "author": "ainotes:alice"}, []string{m1, m5}},
			{"filter state", map[string]any{"q": "port*", "state": "closed"}, []string{m3, m4, m5}},
			{"filter state, none", map[string]any{"q": "port*", "state": "open"}, nil},
			{"filters together", map[string]any{"q": "default", "thread": th2, "author": "ainotes:bob", "kind": "answer"}, []string{m4}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := foundIDs(search(t, svc, alice, c.req))
				slices.SortFunc(got, cmpKey)
				want := append([]string{}, c.want...)
				slices.SortFunc(want, cmpKey)
				if !slices.Equal(got, want) {
					t.Errorf("%s found %v, want %v", jsonOf(c.req), got, want)
				}
			})
		}

		res := search(t, svc, alice, map[string]any{"q": "loopback"})
		if len(res.Results) != 1 {
			t.Fatalf("loopback: %s", jsonOf(res))
		}
		hit := res.Results[0]
		if hit.Thread.ID != th2 || hit.Thread.State != protocol.StateClosed || hit.Thread.Title == nil ||
			*hit.Thread.Title != "Which port does parley serve listen on by default?" ||
			hit.Message.Body != "8080 on loopback, the default port." || hit.Message.From.Identity != "ainotes:bob" || hit.Snippet != hit.Message.Body {
			t.Errorf("hit: %s", jsonOf(hit))
		}
	})
}

// A better match comes first; among equal matches the newer message; pages follow each other
// with no gap and no repetition.
func TestSearchOrdersAndPages(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob, carol := agent("alice", "read,write"), agent("bob", "read,write"), agent("carol", "read,write")
		th := send(t, svc, alice, envelope("ask", "", "A thread about the paging probe")).Thread.ID
		var equal []string
		for i := 0; i < 5; i++ {
			who := []*protocol.Actor{bob, carol}[i%2]
			equal = append(equal, send(t, svc, who, envelope("note", th, "paging probe")).Message.ID)
		}
		best := send(t, svc, bob, envelope("note", th, "probe probe probe probe probe")).Message.ID

		res := search(t, svc, alice, map[string]any{"q": "probe"})
		if got := foundIDs(res); len(got) != 7 || got[0] != best {
			t.Fatalf("probe found %v; want %s (the most occurrences) first", got, best)
		}

		slices.Reverse(equal) // newer first
		var pages []string
		req := map[string]any{"q": `"paging probe"`, "limit": 2, "thread": th}
		for n := 0; ; n++ {
			page := search(t, svc, alice, req)
			pages = append(pages, foundIDs(page)...)
			if !page.More {
				if page.Cursor != nil {
					t.Errorf("last page has a cursor")
				}
				break
			}
			if n > 5 || page.Cursor == nil {
				t.Fatalf("page %d: more without an end: %s", n, jsonOf(page))
			}
			req["cursor"] = *page.Cursor
		}
		// The thread's ask matches the phrase too, and is the oldest.
		want := append(equal, foundIDs(search(t, svc, alice, map[string]any{"q": "thread about"}))...)
		if !slices.Equal(pages, want) {
			t.Errorf("pages found %v, want %v", pages, want)
		}
	})
}

// A message is findable as soon as its send is acknowledged.
func TestSearchFindsWhatWasJustSent(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		for i := 0; i < 20; i++ {
			word := fmt.Sprintf("marker%dx", i)
			id := send(t, svc, alice, envelope("ask", "", "a fresh "+word)).Message.ID
			if got := foundIDs(search(t, svc, alice, map[string]any{"q": word})); !slices.Equal(got, []string{id}) {
				t.Fatalf("%s right after its send found %v, want %s", word, got, id)
			}
		}
	})
}

// A long body's snippet is plain text around the first match, cut between words.
func TestSearchSnippet(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		body := strings.Repeat("filler words before ", 12) + "the <b>needle</b> here " + strings.Repeat("and after it ", 15)
		send(t, svc, alice, envelope("ask", "", body))
		res := search(t, svc, alice, map[string]any{"q": "needle"})
		if len(res.Results) != 1 {
			t.Fatalf("found %s", jsonOf(res))
		}
		s := res.Results[0].Snippet
		if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") || !strings.Contains(s, "the <b>needle</b> here") ||
			len([]rune(s)) > 162 || strings.HasPrefix(s, "…ller") {
			t.Errorf("snippet %q", s)
		}
	})
}

// Bad input is refused as invalid_body and the caller must be able to read.
func TestSearchRefusals(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice := agent("alice", "read,write")
		send(t, svc, alice, envelope("ask", "", "something to find"))
		cases := []struct {
			name   string
			a      *protocol.Actor
			raw    string
			reason protocol.Reason
		}{
			{"no q", alice, `{}`, protocol.ReasonInvalidBody},
			{"empty q", alice, `{"q":""}`, protocol.ReasonInvalidBody},
			{"q too long", alice, jsonOf(map[string]string{"q": strings.Repeat("a", 201)}), protocol.ReasonInvalidBody},
			{"only exclusions", alice, `{"q":"-something"}`, protocol.ReasonInvalidBody},
			{"only punctuation", alice, `{"q":"*** -- \"\""}`, protocol.ReasonInvalidBody},
			{"q not a string", alice, `{"q":5}`, protocol.ReasonInvalidBody},
			{"unknown kind", alice, `{"q":"find","kind":"chat"}`, protocol.ReasonInvalidBody},
			{"unknown state", alice, `{"q":"find","state":"shut"}`, protocol.ReasonInvalidBody},
			{"author not an identity", alice, `{"q":"find","author":"alice"}`, protocol.ReasonInvalidBody},
			{"thread of the wrong form", alice, `{"q":"find","thread":"msg_1"}`, protocol.ReasonInvalidBody},
			{"limit zero", alice, `{"q":"find","limit":0}`, protocol.ReasonInvalidBody},
			{"a cursor never given", alice, `{"q":"find","cursor":"zzz"}`, protocol.ReasonInvalidBody},
			{"an inbox cursor", alice, `{"q":"find","cursor":"aTEuMC4w"}`, protocol.ReasonInvalidBody},
			{"unknown field", alice, `{"q":"find","sort":"new"}`, protocol.ReasonInvalidBody},
			{"no token", nil, `{"q":"find"}`, protocol.ReasonUnauthenticated},
			{"no read right", agent("writer", "write"), `{"q":"find"}`, protocol.ReasonTokenRightMissing},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := svc.Search(context.Background(), c.a, []byte(c.raw))
				wantRefused(t, err, c.reason)
			})
		}
		if got := search(t, svc, alice, map[string]any{"q": strings.Repeat("a", 200), "limit": 1000}); len(got.Results) != 0 {
			t.Errorf("200 characters: %s", jsonOf(got))
		}
	})
}
