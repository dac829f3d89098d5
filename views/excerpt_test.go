package views

import (
	"strings"
	"testing"
)

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("ä", excerptRunes+10)
	for _, tc := range []struct{ name, body, want string }{
		{"short stays whole", "  a short answer\n", "a short answer"},
		{"four lines stay", "1\n2\n3\n4", "1\n2\n3\n4"},
		{"the fifth line is cut", "1\n2\n3\n4 \n5\n6", "1\n2\n3\n4 …"},
		{"long text is cut by characters, not bytes", long, strings.Repeat("ä", excerptRunes) + " …"},
		{"markup stays text", "<script>x</script>", "<script>x</script>"},
	} {
		if got := excerpt(tc.body); got != tc.want {
			t.Errorf("%s: excerpt(%q) = %q, want %q", tc.name, tc.body, got, tc.want)
		}
	}
}
