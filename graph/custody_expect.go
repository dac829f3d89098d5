package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Checking against an expected realm (PROTOCOL.md § 14): a proof holds for whoever made it,
// so an export re-signed whole under another realm key — every binding re-made by it, a claim
// edited — holds too. Told which realm keys to expect (parley verify-export --realm-key,
// --trust-realm), the check fails the export's proof and every binding that another key made.

// custodyProof is who made a proof of custody (empty when it does not hold) and for which
// realm it speaks; export tells the export's own proof from a binding.
type custodyProof struct {
	signer, realm string
	export        bool
}

// addExportProof adds the line of the file's own proof (an export's, or a Data Integrity
// document's).
func (r *CustodyReport) addExportProof(what string, err error, signer, realm string) {
	r.Lines = append(r.Lines, CheckLine{What: what, Err: err, custody: &custodyProof{signer: signer, realm: realm, export: true}})
}

// ExpectedRealms are the realm keys a file's proofs of custody must be made by: Keys of any
// realm (--realm-key DID), Named of the realm named (--trust-realm NAME=DID).
type ExpectedRealms struct {
	Keys  []string
	Named map[string]string
}

// Empty reports whether nothing is expected: every realm key is taken as it comes.
func (e ExpectedRealms) Empty() bool { return len(e.Keys) == 0 && len(e.Named) == 0 }

// String lists the expected keys, each named realm's with its name.
func (e ExpectedRealms) String() string {
	out := slices.Clone(e.Keys)
	for name, k := range e.Named {
		out = append(out, k+" (realm "+name+")")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// check answers why a proof made by signer for realm is not an expected realm's, or nil.
func (e ExpectedRealms) check(signer, realm string) error {
	for name, key := range e.Named {
		if key != signer {
			continue
		}
		if realm != "" && realm != name {
			return fmt.Errorf("made by %s, the expected key of realm %s, for realm %s", signer, name, realm)
		}
		return nil
	}
	if want, ok := e.Named[realm]; ok {
		return fmt.Errorf("made by the realm key %s, not by the expected key of realm %s, %s", signer, realm, want)
	}
	if slices.Contains(e.Keys, signer) {
		return nil
	}
	return fmt.Errorf("made by the realm key %s, not by an expected realm key: %s", signer, e)
}

// Expect fails each proof of custody that holds but was made by a key e does not expect, and
// adds a failing line when the file has no proof of its own to check (a graph read, a
// document without one). Nothing changes when e is empty.
func (r *CustodyReport) Expect(e ExpectedRealms) {
	if e.Empty() {
		return
	}
	own := false
	for i := range r.Lines {
		l := &r.Lines[i]
		if l.custody == nil {
			continue
		}
		own = own || l.custody.export
		if l.Err == nil && l.custody.signer != "" {
			l.Err = e.check(l.custody.signer, l.custody.realm)
		}
	}
	if !own {
		r.addExportProof("export proof by an expected realm key", fmt.Errorf("the file carries no export proof, so no expected realm key (%s) signed it", e), "", "")
	}
}

// ExpectFailure is why the file's own proof is not an expected realm's: the expected keys and
// the key found, or "" when it is (or nothing was expected, or it does not hold at all).
func (r *CustodyReport) ExpectFailure(e ExpectedRealms) string {
	if e.Empty() {
		return ""
	}
	for _, l := range r.Lines {
		if l.custody != nil && l.custody.export && l.custody.signer != "" && e.check(l.custody.signer, l.custody.realm) != nil {
			return fmt.Sprintf("the export is signed by the realm key %s, not by the expected %s", l.custody.signer, e)
		}
	}
	return ""
}
