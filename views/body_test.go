package views

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSegments(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []segment
	}{
		{"plain", []segment{{Text: "plain"}}},
		{"", nil},
		{"see https://example.org/a?b=c.", []segment{{Text: "see "}, {Text: "https://example.org/a?b=c", URL: true}, {Text: "."}}},
		{"(http://x.org)", []segment{{Text: "("}, {Text: "http://x.org", URL: true}, {Text: ")"}}},
		{"https://en.wikipedia.org/wiki/Go_(game) and more", []segment{{Text: "https://en.wikipedia.org/wiki/Go_(game)", URL: true}, {Text: " and more"}}},
		{"javascript:alert(1) ftp://x", []segment{{Text: "javascript:alert(1) ftp://x"}}},
		{`<a href="https://x.org">`, []segment{{Text: `<a href="`}, {Text: "https://x.org", URL: true}, {Text: `">`}}},
		{"two\nhttps://a.b\nhttps://c.d", []segment{{Text: "two\n"}, {Text: "https://a.b", URL: true}, {Text: "\n"}, {Text: "https://c.d", URL: true}}},
		{"https:// alone", []segment{{Text: "https:// alone"}}},
	} {
		if diff := cmp.Diff(tc.want, segments(tc.body)); diff != "" {
			t.Errorf("segments(%q) (-want +got):\n%s", tc.body, diff)
		}
	}
}
