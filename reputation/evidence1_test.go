package reputation_test

import (
	"math"
	"testing"

	"github.com/parleyforum/parley/reputation"
)

// The Wilson lower bounds, computed by hand from the formula of § 17 at z = 1.96 (two-sided
// 95 %): (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n).
func TestWilsonLower(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want float64
	}{
		{0, 1, 0},
		{1, 1, 0.2065493},
		{5, 10, 0.2365931},
		{95, 100, 0.8882495},
		{10, 10, 0.7224672},
		{0, 10, 0},
	} {
		got := reputation.WilsonLower(c.k, c.n, 1.959963984540054)
		if math.Abs(got-c.want) > 1e-6 {
			t.Errorf("WilsonLower(%d, %d) = %.7f, want %.7f", c.k, c.n, got, c.want)
		}
	}
}

// The policy adds held and fell as § 17 lists them, and has no reliability without evidence.
func TestEvidence1Scores(t *testing.T) {
	p := reputation.Evidence1{}
	if s := p.Scores(&reputation.Record{}); s.Reliability != nil || s.Evidence != 0 {
		t.Errorf("an empty record scores %+v, want no reliability and no evidence", s)
	}
	r := &reputation.Record{
		Claims:        reputation.Claims{Verified: 1, Refuted: 2, Supported: 7, Expired: 5},
		Attestations:  reputation.Attestations{OnVerified: 3, OnRefuted: 4, Other: 9},
		Verifications: reputation.Verifications{Held: 5, Fell: 6},
		Refutations:   reputation.Refutations{Standing: 7, Overruled: 8},
		Proposals:     reputation.Proposals{Confirmed: 9, Corrected: 10, Open: 11},
	}
	s := p.Scores(r)
	if s.Held != 1+3+5+7+9 || s.Fell != 2+4+6+8+10 || s.Evidence != s.Held+s.Fell {
		t.Fatalf("scores %+v", s)
	}
	if want := reputation.WilsonLower(25, 55, 1.959963984540054); s.Reliability == nil || *s.Reliability != want {
		t.Errorf("reliability %v, want %v", s.Reliability, want)
	}
	if p.Name() != "parley-evidence-1" {
		t.Errorf("name %q", p.Name())
	}
	// Ranking: a score before none, a higher score first, more evidence first among equals.
	hi, lo := 0.9, 0.1
	cases := []struct {
		a, b reputation.Scores
		less bool
	}{
		{reputation.Scores{Reliability: &lo}, reputation.Scores{}, true},
		{reputation.Scores{}, reputation.Scores{Reliability: &lo}, false},
		{reputation.Scores{Reliability: &hi}, reputation.Scores{Reliability: &lo}, true},
		{reputation.Scores{Reliability: &hi, Evidence: 3}, reputation.Scores{Reliability: &hi, Evidence: 2}, true},
		{reputation.Scores{Reliability: &hi, Evidence: 2}, reputation.Scores{Reliability: &hi, Evidence: 2}, false},
	}
	for i, c := range cases {
		if got := p.Less(c.a, c.b); got != c.less {
			t.Errorf("case %d: Less = %v, want %v", i, got, c.less)
		}
	}
}
