package protocol

import (
	"reflect"
	"testing"
)

// The parts a page marks: the words wanted, in any case, prefixes too; never an excluded
// word; the text kept whole, whatever it holds.
func TestSearchMarks(t *testing.T) {
	for _, tc := range []struct {
		q, text string
		want    []TextPart
	}{
		{"pgbouncer", "Is PgBouncer <b>safe</b>?", []TextPart{{"Is ", false}, {"PgBouncer", true}, {" <b>safe</b>?", false}}},
		{"migr* -safe", "safe migrations", []TextPart{{"safe ", false}, {"migrations", true}}},
		{`"two words"`, "two words", []TextPart{{"two", true}, {" ", false}, {"words", true}}},
		{"absent", "nothing here", []TextPart{{"nothing here", false}}},
		{"", "a refused query marks nothing", []TextPart{{"a refused query marks nothing", false}}},
	} {
		if got := SearchMarks(tc.q, tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SearchMarks(%q, %q) = %v, want %v", tc.q, tc.text, got, tc.want)
		}
	}
}
