package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/uptrace/bun"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
	"github.com/parleyforum/parley/web"
)

// healthNow is the clock of TestHealthPage: a morning in UTC, so that a day bucketed in any
// other zone, or labelled by its end, shows the wrong date on the chart's last bar.
var healthNow = time.Date(2026, 12, 2, 6, 31, 0, 0, time.UTC)

func utc(day, hour, minute int) time.Time {
	month := time.December
	if day > 2 {
		month = time.November
	}
	return time.Date(2026, month, day, hour, minute, 0, 0, time.UTC)
}

// The page /health over a known history, every figure of it, for each period, in both
// languages. The history, with its times set (the clock is 2 December, 06:31 UTC):
//
//	th1: bob's answer 2 Dec 00:10, confirmed 00:40 (30 min)       — confirmed
//	th2: bob's answer 1 Dec 23:50, a human re-marks open 2 Dec 01:00 — corrected
//	th3: bob's answer 30 Nov 10:00, confirmed 12:00 (2 h)         — confirmed
//	th4: bob's answer 10 Nov 08:00, nobody judged it              — not yet judged
//	cl1 (th1, 2 Dec 02:00): attested, verified, refuted by the moderator 2 Dec 03:00
//	cl2 (th1, 29 Nov): attested — supported
//	cl3 (th1, 12 Nov): valid until 20 Nov — expired
func TestHealthPage(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newSite(t, db, web.Options{Clock: func() time.Time { return healthNow }})
		f.account("ada", true)
		ctx := context.Background()
		setAt := func(table, column string, at time.Time, where string, args ...any) {
			t.Helper()
			res, err := db.NewUpdate().Table(table).Set("? = ?", bun.Ident(column), at).Where(where, args...).Exec(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				t.Fatalf("no row of %s where %s %v", table, where, args)
			}
		}
		num := func(key string) int64 {
			_, n, _ := strings.Cut(key, "_")
			v, _ := strconv.ParseInt(n, 10, 64)
			return v
		}
		threadEvent := func(th, act string, at time.Time) {
			t.Helper()
			setAt("events", "at", at, "thread_id = ? AND subject = ? AND act = ?", num(th), th, act)
		}
		proposal := func(question string, at time.Time) string {
			th, _ := f.ask(f.alice, question)
			f.send(f.bob, `{"kind":"answer","thread":"`+th+`","body":"An answer."}`)
			setAt("events", "at", at.Add(-time.Hour), "thread_id = ? AND act = ?", num(th), "ask")
			threadEvent(th, "answer", at)
			return th
		}
		th1 := proposal("Which port?", utc(2, 0, 10))
		f.must(f.post("/v1/threads/"+th1+"/confirm", f.mod, ""), http.StatusOK)
		threadEvent(th1, "confirm", utc(2, 0, 40))
		th2 := proposal("Which host?", utc(1, 23, 50))
		f.must(f.post("/v1/threads/"+th2+"/mark", f.human, `{"state":"open"}`), http.StatusOK)
		threadEvent(th2, "mark", utc(2, 1, 0))
		th3 := proposal("Which path?", utc(30, 10, 0))
		f.must(f.post("/v1/threads/"+th3+"/confirm", f.mod, ""), http.StatusOK)
		threadEvent(th3, "confirm", utc(30, 12, 0))
		th4 := proposal("Which scheme?", utc(10, 8, 0))

		const proof = `{"evidence":[{"kind":"note","ref":"the manual"}]}`
		claim := func(statement string, created time.Time) string {
			cl := f.must(f.post("/v1/claims", f.bob, `{"thread":"`+th1+`","statement":"`+statement+`","evidence":[{"kind":"note","ref":"the manual"}],"valid_until":"2030-01-01T00:00:00Z"}`), http.StatusCreated).at("claim", "id")
			setAt("claims", "created_at", created, "id = ?", num(cl))
			return cl
		}
		cl1 := claim("The default port is 8080.", utc(2, 2, 0))
		f.must(f.post("/v1/claims/"+cl1+"/attest", f.alice, proof), http.StatusOK)
		f.must(f.post("/v1/claims/"+cl1+"/verify", f.human, proof), http.StatusOK)
		f.must(f.post("/v1/claims/"+cl1+"/refute", f.mod, `{"evidence":[{"kind":"log","ref":"it listens on 8081"}],"body":"8081."}`), http.StatusOK)
		setAt("events", "at", utc(2, 3, 0), "subject = ? AND from_state = ? AND to_state = ?", cl1, "verified", "refuted")
		cl2 := claim("The default host is localhost.", utc(29, 9, 0))
		f.must(f.post("/v1/claims/"+cl2+"/attest", f.alice, proof), http.StatusOK)
		cl3 := claim("The scheme is http.", utc(12, 9, 0))
		setAt("claims", "valid_until", utc(20, 0, 0), "id = ?", num(cl3))

		for th, at := range map[string]time.Time{th1: utc(2, 0, 40), th2: utc(2, 1, 0), th3: utc(30, 12, 0), th4: utc(10, 8, 0)} {
			setAt("threads", "updated_at", at, "id = ?", num(th))
		}

		admin := f.signedIn(t, "ada")
		type figures map[string]string
		cases := []struct {
			target  string
			period  string
			figures figures
			bars    int
			// last is the last bar's start and its label; marked, a bar and what it holds.
			last, lastLabel, marked, markedCells string
		}{
			{"/health?lang=en", "week", figures{"confirmed": "2", "corrected": "1", "open": "0", "median": "1 h 15 min", "longest": "2 h",
				"claims-verified": "0", "claims-supported": "1", "claims-unverified": "0", "claims-refuted": "1", "claims-superseded": "0", "claims-expired": "0", "overturned": "1"},
				7, "2026-12-02T00:00Z", "2 Dec", "2026-12-01T00:00Z", "1 Dec 0 1 0"},
			{"/health?period=day&lang=en", "day", figures{"confirmed": "1", "corrected": "1", "open": "0", "median": "30 min", "longest": "30 min",
				"claims-verified": "0", "claims-supported": "0", "claims-refuted": "1", "claims-expired": "0", "overturned": "1"},
				24, "2026-12-02T06:00Z", "06:00", "2026-12-02T00:00Z", "00:00 1 0 0"},
			{"/health?period=all&lang=en", "all", figures{"confirmed": "2", "corrected": "1", "open": "1", "median": "1 h 15 min", "longest": "2 h",
				"claims-supported": "1", "claims-refuted": "1", "claims-expired": "1", "overturned": "1"},
				23, "2026-12-02T00:00Z", "2 Dec", "2026-11-10T00:00Z", "10 Nov 0 0 1"},
			{"/health?period=week&lang=de", "week", figures{"confirmed": "2", "corrected": "1", "median": "1 Std. 15 Min.", "longest": "2 Std."},
				7, "2026-12-02T00:00Z", "2.12.", "2026-12-01T00:00Z", "1.12. 0 1 0"},
		}
		for _, tc := range cases {
			p := admin.get(tc.target).must(t, http.StatusOK)
			if got := p.find(`[data-page="health"]`).AttrOr("data-period", ""); got != tc.period {
				t.Errorf("%s: period %q, want %s", tc.target, got, tc.period)
			}
			if p.find(`[data-period-choice="`+tc.period+`"][aria-current="page"]`).Length() != 1 || p.find(`a[data-period-choice]`).Length() != 2 {
				t.Errorf("%s: the period chosen is not marked, or the other two are not links", tc.target)
			}
			for name, want := range tc.figures {
				if got := p.text(`[data-figure="` + name + `"]`); got != want {
					t.Errorf("%s: %s is %q, want %q", tc.target, name, got, want)
				}
			}
			bars := p.find(`svg[data-chart] [data-bar]`)
			if bars.Length() != tc.bars {
				t.Errorf("%s: %d bars, want %d", tc.target, bars.Length(), tc.bars)
			}
			last := bars.Last()
			if got := last.AttrOr("data-bar", ""); got != tc.last {
				t.Errorf("%s: the last bar starts %s, want %s", tc.target, got, tc.last)
			}
			if got := strings.TrimSpace(last.Find(`[data-bar-label]`).Text()); got != tc.lastLabel {
				t.Errorf("%s: the last bar is labelled %q, want %q", tc.target, got, tc.lastLabel)
			}
			var cells []string
			p.find(`tr[data-bar-row="` + tc.marked + `"]`).Children().Each(func(_ int, s *goquery.Selection) { cells = append(cells, strings.TrimSpace(s.Text())) })
			if got := strings.Join(cells, " "); got != tc.markedCells {
				t.Errorf("%s: the table's row %s reads %q, want %q", tc.target, tc.marked, got, tc.markedCells)
			}
			if p.find(`tr[data-bar-row]`).Length() != tc.bars {
				t.Errorf("%s: the table has %d rows for %d bars", tc.target, p.find(`tr[data-bar-row]`).Length(), tc.bars)
			}
			svg := p.find(`svg[data-chart]`)
			if svg.AttrOr("role", "") != "img" || strings.TrimSpace(svg.Find("title#chart-title").Text()) == "" || strings.TrimSpace(svg.Find("desc#chart-desc").Text()) == "" {
				t.Errorf("%s: the chart lacks its role, title or description", tc.target)
			}
			// The seal overturned, linked to its place and to whoever refuted it.
			o := p.find(`[data-claim-id="` + cl1 + `"]`)
			if o.Find(`a[href="/threads/`+th1+`#`+cl1+`"]`).Length() != 1 || o.Find(`a[href="/identities/ainotes:mod"]`).Length() != 1 {
				t.Errorf("%s: the overturned seal %s is not linked: %q", tc.target, cl1, o.Text())
			}
			// The threads waiting, whatever the period: the unconfirmed proposal, waiting
			// longest, first; th3 and th1 await their asker, th2 (re-marked open) an answer.
			var waiting []string
			p.find(`[data-thread-id]`).Each(func(_ int, s *goquery.Selection) { waiting = append(waiting, s.AttrOr("data-thread-id", "")) })
			if want := []string{th4, th3, th1, th2}; strings.Join(waiting, " ") != strings.Join(want, " ") {
				t.Errorf("%s: the threads waiting are %v, want %v", tc.target, waiting, want)
			}
		}
		admin.get("/health?period=year").must(t, http.StatusBadRequest)
		if r := f.browser(t).get("/health"); r.status != http.StatusSeeOther {
			t.Errorf("/health without a session: %d, want the login", r.status)
		}
		if r := f.get("/healthz", ""); r.status != http.StatusOK || r.json["status"] != "ok" {
			t.Errorf("/healthz, the probe, changed: %d %s", r.status, r.body)
		}
		if admin.get("/identities").find(`a[href="/health"]`).Length() == 0 {
			t.Errorf("the identities page does not link the health page")
		}
	})
}
