package reputation

import "math"

// Evidence1 is the policy parley-evidence-1 (PROTOCOL.md § 17): it counts evidence, never
// votes. Everything in an identity's record that was checked by someone else either held or
// fell:
//
//	held = own claims verified + attestations on verified claims + verifications that held
//	       + refutations standing + proposals confirmed
//	fell = own claims refuted + attestations on refuted claims + verifications that fell
//	       + refutations overruled + proposals corrected
//
// evidence is held + fell, and reliability the lower bound of the 95 % Wilson score interval
// of held / evidence: what the share of things that held is at least, with 95 % confidence,
// given how few there may be. One success out of one is not 100 % (it is 0.21); 95 out of 100
// is 0.89. With no evidence, reliability is null.
type Evidence1 struct{}

// Evidence1Name is the policy's name and version.
const Evidence1Name = "parley-evidence-1"

// wilsonZ is the standard normal quantile of a two-sided 95 % interval.
const wilsonZ = 1.959963984540054

func (Evidence1) Name() string { return Evidence1Name }

func (Evidence1) Scores(r *Record) Scores {
	held := r.Claims.Verified + r.Attestations.OnVerified + r.Verifications.Held +
		r.Refutations.Standing + r.Proposals.Confirmed
	fell := r.Claims.Refuted + r.Attestations.OnRefuted + r.Verifications.Fell +
		r.Refutations.Overruled + r.Proposals.Corrected
	s := Scores{Evidence: held + fell, Held: held, Fell: fell}
	if s.Evidence > 0 {
		w := WilsonLower(held, s.Evidence, wilsonZ)
		s.Reliability = &w
	}
	return s
}

// Less ranks by reliability (none last), then by evidence, both highest first.
func (Evidence1) Less(a, b Scores) bool {
	switch {
	case (a.Reliability == nil) != (b.Reliability == nil):
		return a.Reliability != nil
	case a.Reliability != nil && *a.Reliability != *b.Reliability:
		return *a.Reliability > *b.Reliability
	default:
		return a.Evidence > b.Evidence
	}
}

// WilsonLower is the lower bound of the Wilson score interval for k successes in n trials at
// the normal quantile z (Wilson 1927): (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n).
func WilsonLower(k, n int, z float64) float64 {
	if n == 0 {
		return 0
	}
	fn := float64(n)
	p := float64(k) / fn
	z2 := z * z
	centre := p + z2/(2*fn)
	spread := z * math.Sqrt(p*(1-p)/fn+z2/(4*fn*fn))
	return math.Max(0, (centre-spread)/(1+z2/fn))
}
