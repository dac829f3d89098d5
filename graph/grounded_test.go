package graph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The grounded labelling on small argument frameworks whose labelling is known.
func TestGrounded(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		attacks string // "a>b c>d": a attacks b, c attacks d
		want    string // "a:in b:out …"
	}{
		{"no attacks", []string{"a", "b"}, "", "a:in b:in"},
		{"one attack", []string{"a", "b"}, "a>b", "a:in b:out"},
		{"a chain of three reinstates", []string{"a", "b", "c"}, "a>b b>c", "a:in b:out c:in"},
		{"a chain of four", []string{"a", "b", "c", "d"}, "a>b b>c c>d", "a:in b:out c:in d:out"},
		{"an even cycle is undecided", []string{"a", "b"}, "a>b b>a", "a:undec b:undec"},
		{"an odd cycle is undecided", []string{"a", "b", "c"}, "a>b b>c c>a", "a:undec b:undec c:undec"},
		{"a self-attack", []string{"a", "b"}, "a>a a>b", "a:undec b:undec"},
		{"a self-attacker attacked from outside", []string{"a", "b"}, "a>a b>a", "a:out b:in"},
		{"a refuted refuter", []string{"claim", "r1", "r2"}, "r1>claim r2>r1", "claim:in r1:out r2:in"},
		{"a cycle broken from outside", []string{"a", "b", "c"}, "a>b b>a c>b", "a:in b:out c:in"},
		{"undecided spreads to what it attacks", []string{"a", "b", "c"}, "a>b b>a b>c", "a:undec b:undec c:undec"},
		{"an attack from an unknown argument is ignored", []string{"a"}, "x>a", "a:in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var attacks []Attack
			for _, pair := range strings.Fields(c.attacks) {
				from, to, _ := strings.Cut(pair, ">")
				attacks = append(attacks, Attack{from, to})
			}
			want := map[string]Label{}
			for _, pair := range strings.Fields(c.want) {
				arg, label, _ := strings.Cut(pair, ":")
				want[arg] = Label(label)
			}
			if diff := cmp.Diff(want, Grounded(c.args, attacks)); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
