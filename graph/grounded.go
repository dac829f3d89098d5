package graph

// Dung's grounded semantics (Dung 1995; labelling after Caminada 2006): the least fixed
// point of "accept what every attacker of is rejected, reject what an accepted argument
// attacks". It is sceptical — it accepts only what no line of attack leaves in doubt — and
// unique, so it can be shown beside the verifier's seal without choosing among extensions.

// Label is an argument's grounded label.
type Label string

const (
	In    Label = "in"    // every attacker is out: accepted
	Out   Label = "out"   // an attacker is in: rejected
	Undec Label = "undec" // neither: undecided (cycles of attack keep it open)
)

// Attack is "From attacks To".
type Attack struct{ From, To string }

// Grounded labels every argument in, out or undec. Attacks naming an argument that is not
// listed are ignored.
func Grounded(arguments []string, attacks []Attack) map[string]Label {
	attackers := make(map[string][]string, len(arguments))
	labels := make(map[string]Label, len(arguments))
	for _, a := range arguments {
		labels[a] = Undec
		attackers[a] = nil
	}
	for _, at := range attacks {
		_, fromKnown := labels[at.From]
		if _, toKnown := labels[at.To]; fromKnown && toKnown {
			attackers[at.To] = append(attackers[at.To], at.From)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, a := range arguments {
			if labels[a] != Undec {
				continue
			}
			allOut, anyIn := true, false
			for _, b := range attackers[a] {
				allOut = allOut && labels[b] == Out
				anyIn = anyIn || labels[b] == In
			}
			switch {
			case allOut:
				labels[a], changed = In, true
			case anyIn:
				labels[a], changed = Out, true
			}
		}
	}
	return labels
}
