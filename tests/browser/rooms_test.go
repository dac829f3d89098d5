package browser

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// roomPages are the pages of rooms (PROTOCOL.md § 16) the scenario checks on every screen:
// the administrators' page, a room's threads and the new-thread form with its room picker.
var roomPages = []mainPage{
	{"rooms-admin", "/rooms", true},
	{"room", "/rooms/research", true},
	{"thread-new", "/threads/new?room=research", true},
}

// testRooms: on /rooms the administrator creates a room and a room inside it, renames and
// describes one, archives another and moves an agent's thread into the inner room; from a
// room's page a human opens a thread with the room picker (with and without JavaScript),
// which offers no archived room; a token made on /tokens for one room reaches only that
// room and the room inside it. The room pages are axe-clean wide and at 390 px in both
// languages, nothing scrolls sideways on the phone, and there the rooms' titles are not
// broken inside a word. On SQLite the run takes their screenshots.
func testRooms(t *testing.T, f *forum) {
	tb := f.signIn(t, tabOptions{})
	tb.open(f.base + "/rooms")
	create := func(name, title, description, parent string) string {
		t.Helper()
		row := fmt.Sprintf(`tr:has(a[href="/rooms/%s"])`, name)
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.SendKeys(chromedp.CSS(`#room-create input[name="name"]`), name),
			chromedp.SendKeys(chromedp.CSS(`#room-create input[name="title"]`), title),
			chromedp.SendKeys(chromedp.CSS(`#room-create input[name="description"]`), description),
			chromedp.SetValue(chromedp.CSS(`#room-create select[name="parent"]`), parent),
			chromedp.Click(chromedp.CSS(`[data-action="room-create"]`)),
			chromedp.WaitReady(chromedp.CSS(row)),
		}
		tb.do(steps...)
		return tb.attr(row, "data-room-id")
	}
	research := create("research", "Research", "", "")
	inner := create("inner", "Inner workings", "What the server does inside", "research")
	attic := create("attic", "Attic", "", "")
	if got := tb.text(fmt.Sprintf(`tr[data-room-id=%q]`, inner)); !strings.Contains(got, "Research") {
		t.Errorf("the inner room's row does not name the room it is inside: %q", got)
	}

	// Rename and describe research; archive the attic.
	row := func(id string) string { return fmt.Sprintf(`tr[data-room-id=%q]`, id) }
	tb.do(
		chromedp.SetValue(chromedp.CSS(row(research)+` input[name="title"]`), "Research and findings"),
		chromedp.SetValue(chromedp.CSS(row(research)+` input[name="description"]`), "What we find out, with its evidence"),
		chromedp.Click(chromedp.CSS(row(research)+` [data-action="room-update"]`)),
		chromedp.WaitReady(chromedp.CSS(row(research)+` input[name="title"][value="Research and findings"]`)),
		chromedp.Click(chromedp.CSS(row(attic)+` input[name="archived"]`)),
		chromedp.Click(chromedp.CSS(row(attic)+` [data-action="room-update"]`)),
		chromedp.WaitReady(chromedp.CSS(row(attic)+` input[name="archived"][checked]`)),
	)

	// Move an agent's thread into the inner room.
	asked := f.alice.send(t, map[string]any{"kind": "ask", "body": "Why does the feed reconnect every minute?"})
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`.room-move input[name="thread"]`), asked.thread),
		chromedp.SetValue(chromedp.CSS(`.room-move select[name="room"]`), "inner"),
	)
	if status := tb.follow(chromedp.Click(chromedp.CSS(`.room-move [data-action="move"]`))); status != http.StatusOK {
		t.Fatalf("moving %s into inner: status %d", asked.thread, status)
	}
	tb.open(f.base + "/threads/" + asked.thread)
	if tb.count(fmt.Sprintf(`[data-thread-room=%q]`, inner)) != 1 {
		t.Errorf("after the move %s is not in the inner room %s", asked.thread, inner)
	}

	// A human opens a thread from the room's page; the picker offers no archived room.
	withAndWithoutJavaScript(t, func(t *testing.T, js bool) {
		tb := f.signIn(t, tabOptions{noJavaScript: !js})
		tb.open(f.base + "/rooms/research")
		tb.do(
			chromedp.Click(chromedp.CSS(`a[data-nav="thread-new"]`)),
			chromedp.WaitReady(chromedp.CSS(`[data-action="thread-create"]`)),
		)
		if got := tb.value(`select[name="room"]`); got != "research" {
			t.Errorf("the picker reached from research preselects %q", got)
		}
		offered := tb.attrs(`select[name="room"] option`, "value")
		if slices.Contains(offered, "attic") || !slices.Contains(offered, "inner") {
			t.Errorf("the picker offers %v: the archived attic, or not the inner room", offered)
		}
		title := fmt.Sprintf("Where do the server's logs go? (javascript=%t)", js)
		tb.do(
			chromedp.SendKeys(chromedp.CSS(`input[name="title"]`), title),
			chromedp.SendKeys(chromedp.CSS(`textarea[name="body"]`), "The disk fills up by noon."),
			chromedp.SetValue(chromedp.CSS(`select[name="room"]`), "inner"),
			chromedp.Click(chromedp.CSS(`[data-action="thread-create"]`)),
			chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`[data-thread-room=%q]`, inner))),
		)
		if got := tb.text("h1"); !strings.Contains(got, title) {
			t.Errorf("the new thread's heading reads %q, want its title", got)
		}
	})

	// A token for research alone, made on /tokens, reaches research and the room inside it.
	tb.open(f.base + "/tokens")
	tb.do(
		chromedp.SendKeys(chromedp.CSS(`input[name="handle"]`), "research-team"),
		chromedp.SendKeys(chromedp.CSS(`input[name="rooms"]`), "research"),
		chromedp.Click(chromedp.CSS(`[data-action="token-create"]`)),
		chromedp.WaitReady(chromedp.CSS(`[data-token-secret]`)),
	)
	team := agent{base: f.base, token: tb.text(`[data-token-secret]`)}
	status, body := team.call(t, http.MethodGet, "/v1/rooms", nil)
	var listed struct {
		Rooms []struct {
			ID string `json:"id"`
		} `json:"rooms"`
	}
	if err := json.Unmarshal(body, &listed); status != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/rooms with the research token: %d %s", status, body)
	}
	var reached []string
	for _, r := range listed.Rooms {
		reached = append(reached, r.ID)
	}
	if strings.Join(reached, " ") != research+" "+inner {
		t.Errorf("the research token lists the rooms %v, want %s and %s", reached, research, inner)
	}
	elsewhere := f.alice.send(t, map[string]any{"kind": "ask", "body": "Is general quiet today?"})
	if status, _ := team.call(t, http.MethodGet, "/v1/threads/"+elsewhere.thread, nil); status != http.StatusNotFound {
		t.Errorf("the research token reads a thread of general: %d, want 404", status)
	}
	if status, _ := team.call(t, http.MethodGet, "/v1/threads/"+asked.thread, nil); status != http.StatusOK {
		t.Errorf("the research token does not read the thread in its inner room: %d", status)
	}

	for _, v := range viewports {
		for _, lang := range []string{"en", "de"} {
			tb := f.signIn(t, tabOptions{width: v.width, height: v.height, mobile: v.mobile, acceptLanguage: lang})
			for _, p := range roomPages {
				where := fmt.Sprintf("%s (%s, %s)", p.path, lang, v.name)
				tb.open(f.base + p.path)
				if v.mobile {
					checkNoSidewaysScroll(t, tb, where)
				}
				checkAccessibility(t, tb, where)
				if f.screenshots && p.name != "room" {
					tb.screenshot(fmt.Sprintf("%s-%s-%s", p.name, lang, v.name))
				}
			}
			tb.open(f.base + "/rooms")
			// Each room's title is one line: no word of it broken to fit a narrow column.
			broken := run(tb, "the rooms' titles", chromedp.Evaluate[[]string](`[...document.querySelectorAll(
				"table.rooms-admin td:first-child > a")].filter(a => a.getClientRects().length > 1).map(a => a.textContent)`))
			if len(broken) > 0 {
				t.Errorf("/rooms (%s, %s): the titles %q break over lines", lang, v.name, broken)
			}
		}
	}
}
