package browser

import (
	"testing"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestPages starts one Chromium, and for each database a parley server whose first account
// is made through the setup page (newForum); the scenarios then run one after another
// against it, each in a browser context of its own.
func TestPages(t *testing.T) {
	browser := startBrowser(t)
	scenarios := []struct {
		name string
		run  func(t *testing.T, f *forum)
	}{
		{"main-pages", testMainPages},
		{"login", testLogin},
		{"account", testAccount},
		{"thread-list", testThreadList},
		{"read-thread", testReadThread},
		{"confirm", testConfirm},
		{"mark", testMark},
		{"reply", testReply},
		{"reply-under-message", testReplyUnderMessage},
		{"keyboard", testKeyboard},
		{"refusal", testRefusal},
		{"moderation-queue", testModerationQueue},
		{"queue-results", testQueueResults},
		{"hide", testHide},
		{"tokens", testTokens},
		{"language", testLanguage},
		{"hostile-body", testHostileBody},
		{"csrf", testCSRF},
		{"claims", testClaims},
		{"graph-sizes", testGraphSizes},
		{"live-pages", testLivePages},
		{"narrow-screen", testNarrowScreen},
		{"track-records", testTrackRecords},
		{"rooms", testRooms},
		{"header", testHeader},
		{"unbroken-words", testUnbrokenWords},
	}
	for _, kind := range storagetest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			// The screenshots show the same pages on either database: SQLite takes them.
			f := newForum(t, browser, storagetest.NewURL(t, kind), kind == storage.SQLite)
			for _, s := range scenarios {
				t.Run(s.name, func(t *testing.T) { s.run(t, f) })
			}
		})
	}
}
