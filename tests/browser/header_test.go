package browser

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// testHeader: the site header is one row on a wide screen (1280 px) and compact on a phone
// (390 px), in English and German, for an administrator with every link, rooms to list and a
// queue of three digits — it wrapped to two rows at 1280 px (three in German) and took about
// 250 px of a phone. The rooms fold into a menu that opens, with and without JavaScript, on
// the screen. With JavaScript the navigation's count of the queue follows the queue without
// a reload: a new proposal raises it, a confirm lowers it.
func testHeader(t *testing.T, f *forum) {
	// With JavaScript the count follows the queue live (while the new proposal is on the
	// queue's first page).
	live := f.signIn(t, tabOptions{})
	live.open(f.base + "/moderation")
	loads := live.watchLoads("the queue's count following it", true)
	before, _ := strconv.Atoi(live.attr(`#nav-queue [data-queue-count]`, "data-queue-count"))
	thread, _ := f.proposal(t, "Counted in the header at once?")
	live.do(chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`#nav-queue [data-queue-count="%d"]`, before+1))))
	live.do(
		clickLive(fmt.Sprintf(`#queue-live [data-thread-id=%q] [data-action="confirm"]`, thread)),
		chromedp.WaitReady(chromedp.CSS(fmt.Sprintf(`#nav-queue [data-queue-count="%d"]`, before))),
	)
	loads()

	// Rooms to list, and more than 99 proposals waiting, as in a busy forum.
	for _, r := range [][2]string{{"lab", "Laboratory"}, {"ops", "Operations and incidents"}} {
		f.command(t, "", "room", "create", "--name", r[0], "--title", r[1])
	}
	asker := agent{base: f.base, token: f.agentToken(t, "crowd-asker", "read,write")}
	answerer := agent{base: f.base, token: f.agentToken(t, "crowd-answerer", "read,write")}
	for i := range 100 {
		asked := asker.send(t, map[string]any{"kind": "ask", "room": "lab", "body": fmt.Sprintf("Question %d of a busy forum?", i)})
		answerer.send(t, map[string]any{"kind": "answer", "thread": asked.thread, "body": "A model's answer."})
	}

	for _, v := range viewports {
		for _, lang := range []string{"en", "de"} {
			where := fmt.Sprintf("the header (%s, %s)", lang, v.name)
			tb := f.signIn(t, tabOptions{width: v.width, height: v.height, mobile: v.mobile, acceptLanguage: lang})
			tb.open(f.base + "/moderation")
			if n, _ := strconv.Atoi(tb.attr(`#nav-queue [data-queue-count]`, "data-queue-count")); n < 100 {
				t.Fatalf("%s: the queue counts %d, the test wants three digits", where, n)
			}
			rows := headerRows(tb)
			height := tb.box("header.site-header").Bottom
			if v.mobile {
				if height > 120 {
					t.Errorf("%s is %.0f px tall on a phone (%d rows), want at most 120", where, height, rows)
				}
				checkNoSidewaysScroll(t, tb, where)
			} else if rows != 1 || height > 70 {
				t.Errorf("%s has %d rows, %.0f px tall, at %d px; want one row", where, rows, height, v.width)
			}
			// The rooms' menu opens, and what it lists is on the screen.
			tb.do(chromedp.Click(chromedp.CSS(`.rooms-menu > summary`)), chromedp.WaitVisible(chromedp.CSS(`.rooms-menu [data-room-id] a`)))
			if menu := tb.box(`.rooms-menu > ul.rooms`); menu.Left < 0 || menu.Right > float64(v.width) {
				t.Errorf("%s: the rooms' menu stands at %.0f–%.0f px, off a screen of %d", where, menu.Left, menu.Right, v.width)
			}
			if n := tb.count(`.rooms-menu [data-room-id]`); n < 3 {
				t.Errorf("%s: the rooms' menu lists %d rooms, want general, lab and ops", where, n)
			}
			checkAccessibility(t, tb, where+" with the rooms' menu open")
			if f.screenshots {
				// On a short page (an empty room), with the rooms' menu open.
				tb.open(f.base + "/rooms/ops")
				tb.do(chromedp.Click(chromedp.CSS(`.rooms-menu > summary`)), chromedp.WaitVisible(chromedp.CSS(`.rooms-menu [data-room-id] a`)))
				tb.screenshot(fmt.Sprintf("header-%s-%s", lang, v.name))
			}
		}
	}

	// Without JavaScript the menu opens too, and leads to a room.
	tb := f.signIn(t, tabOptions{noJavaScript: true})
	tb.open(f.base + "/")
	tb.do(chromedp.Click(chromedp.CSS(`.rooms-menu > summary`)), chromedp.WaitVisible(chromedp.CSS(`.rooms-menu [data-room-id] a[href="/rooms/lab"]`)))
	tb.follow(chromedp.Click(chromedp.CSS(`.rooms-menu [data-room-id] a[href="/rooms/lab"]`)))
	if got := tb.location(); got != f.base+"/rooms/lab" {
		t.Errorf("the rooms' menu without JavaScript led to %s", got)
	}

}

// headerRows is how many rows the header's parts stand in: the brand, each entry of the
// navigation, the search box and each part of the account, grouped by where they stand.
func headerRows(tb *tab) int {
	tb.t.Helper()
	return run(tb, "the header's rows", chromedp.Evaluate[int](`(() => {
		const parts = document.querySelectorAll(
			"header .brand, header nav > ul > li, header .site-search, header .account > *, header .account .langs li");
		const tops = [];
		for (const p of parts) {
			const r = p.getBoundingClientRect();
			if (r.width === 0 || r.height === 0) continue; // not shown here (a phone's search link on a wide screen)
			const middle = r.top + r.height / 2;
			if (!tops.some(t => Math.abs(t - middle) < r.height / 2)) tops.push(middle);
		}
		return tops.length;
	})()`))
}
