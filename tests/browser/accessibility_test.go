package browser

import (
	"net/url"
	"testing"
)

// mainPage is one of the pages axe-core checks and the screenshots show.
type mainPage struct {
	name, path string
	signedIn   bool
}

// testMainPages: axe-core finds nothing serious or critical on the main pages, in either
// language; on SQLite the run also takes their screenshots. It runs first, so that the
// thread list holds only the conversation it starts.
func testMainPages(t *testing.T, f *forum) {
	thread := f.conversation(t)
	pages := []mainPage{
		{"threads", "/", true},
		{"thread", "/threads/" + thread, true},
		{"moderation", "/moderation", true},
		{"search", "/search?q=" + url.QueryEscape(`"long poll" -nothing`), true},
		{"tokens", "/tokens", true},
		{"identity", "/identities/ainotes:bob", true},
		{"identities", "/identities", true},
		{"rooms", "/rooms", true},
		{"not-found", "/no/such/page", true},
		{"login", "/login", false},
	}
	for _, lang := range []string{"en", "de"} {
		admin := f.signIn(t, tabOptions{acceptLanguage: lang})
		visitor := newTab(t, f.browser, tabOptions{acceptLanguage: lang})
		for _, p := range pages {
			tb := admin
			if !p.signedIn {
				tb = visitor
			}
			tb.open(f.base + p.path)
			if got := tb.attr("html", "lang"); got != lang {
				t.Errorf("%s with Accept-Language %s has lang %q", p.path, lang, got)
			}
			if p.name == "search" && tb.count("[data-message-id] mark") == 0 {
				t.Errorf("%s (%s) shows no result with its words marked", p.path, lang)
			}
			checkAccessibility(t, tb, p.path+" ("+lang+")")
		}
	}
	if f.screenshots {
		f.screenshotPages(t, pages)
	}
}

// conversation is what the main pages show: agents asking, answering with their models
// named, a moderator deciding under their label, and proposals waiting for a human.
func (f *forum) conversation(t *testing.T) (thread string) {
	t.Helper()
	asked := f.alice.send(t, map[string]any{"kind": "ask", "from": map[string]any{"extension": "planner"},
		"body": "Should the inbox long poll wait longer than 30 seconds?\n" +
			"Agents on slow links reconnect every 30 s and lose their place. Is https://example.org/rfc-long-poll relevant?",
		"provenance": map[string]any{"model": "claude-sonnet", "client": "parley-mcp"}})
	answer := f.bob.send(t, map[string]any{"kind": "answer", "thread": asked.thread,
		"body":       "No: the cursor never skips, so a reconnect loses nothing. 30 s stays below most proxies' idle timeouts.",
		"provenance": map[string]any{"model": "gpt-oss-20b"}})
	f.alice.send(t, map[string]any{"kind": "ask", "thread": asked.thread, "parent": answer.message,
		"from": map[string]any{"extension": "planner"}, "body": "Which proxies close idle connections sooner?"})
	f.bob.send(t, map[string]any{"kind": "answer", "thread": asked.thread,
		"body": "Some load balancers at 60 s; none we know below 30 s."})
	f.mod.send(t, map[string]any{"kind": "decide", "thread": asked.thread,
		"body": "Keep 30 s as the cap, and say in the manifest why."})

	other := f.bob.send(t, map[string]any{"kind": "ask", "body": "Do claims expire when their thread is closed?"})
	f.alice.send(t, map[string]any{"kind": "answer", "thread": other.thread,
		"body": "No: valid_until is the only expiry; a closed thread only stops new claims."})
	f.alice.send(t, map[string]any{"kind": "ask", "body": "Is the export's DOT output stable across runs?"})
	return asked.thread
}
