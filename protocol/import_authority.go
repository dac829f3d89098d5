package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
)

// § 14, a realm speaks for its own identities only. From realm A's export an import takes
// what A can vouch for — claims and stances by A's identities (A:…, and A's humans, human:…)
// — and what the export carries from a third realm C only with C's own proofs: a stance by
// C:… must be signed by a key whose binding C's realm key made (C trusted here, as every realm
// an export names must be), and a claim whose origin is C must be asserted by one of C's
// identities and carry at least one stance signed in C on it (the document names the claim by
// its id there, and binds its statement). Anything else refuses the whole import. Claims do
// not carry proofs of their own: a claim is vouched for by its realm's export, or by its
// realm's signed stances on it.
//
// Once here, a claim of realm C is changed by a later import only through C's own export or
// that of the realm whose export brought it (importTx.mayChange).

// realmOf is the realm of an identity as the export of realm exporter names it: a human
// (human:ann) is the exporter's; any other identity names its realm.
func realmOf(identity, exporter string) string {
	realm, _, _ := strings.Cut(identity, ":")
	if realm == HumanRealm {
		return exporter
	}
	return realm
}

// bindingRealms maps each key of the export to the realm its binding names; the binding was
// checked against that realm's key with the export's custody (custodyHolds).
func bindingRealms(keys []CustodyKey) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		var b struct {
			Realm string `json:"realm"`
		}
		if json.Unmarshal(k.Binding, &b) == nil {
			out[k.DID] = b.Realm
		}
	}
	return out
}

// checkClaimAuthority checks that the export's realm may speak for c and each of its stances,
// and answers the keys of the signed stances, by did. Every document's proof and binding are
// checked here too, against the stance and the claim (checkDocument).
func (s *Service) checkClaimAuthority(c *importClaim, bound, keyRealms map[string]string) ([]string, error) {
	exporter := c.realm
	claimRealm := c.originRealm()
	if err := s.foreign(c.By.Identity); err != nil {
		return nil, refuseClaim(c, "%v", err)
	}
	if r := realmOf(c.By.Identity, exporter); r != claimRealm {
		return nil, refuseClaim(c, "it is made in realm %s but asserted by %s, an identity of realm %s; realm %s speaks only for its own identities",
			claimRealm, c.By.Identity, r, exporter)
	}
	vouched := claimRealm == exporter
	var dids []string
	for _, st := range c.stances {
		if err := s.foreign(st.By.Identity); err != nil {
			return nil, refuseStance(c, st, "%v", err)
		}
		author := realmOf(st.By.Identity, exporter)
		if st.Document == nil {
			if author != exporter {
				return nil, refuseStance(c, st, "it is by %s, an identity of realm %s, and carries no proof of realm %s's; realm %s speaks only for its own identities",
					st.By.Identity, author, author, exporter)
			}
			continue
		}
		did, d, err := c.checkDocument(st, bound)
		if err != nil {
			return nil, refuseStance(c, st, "its signed document: %v", err)
		}
		switch {
		case IsHumanIdentity(st.By.Identity):
			return nil, refuseStance(c, st, "it is signed by %s, a human of realm %s, who has no name here that keeps the signature", st.By.Identity, exporter)
		case keyRealms[did] != author:
			return nil, refuseStance(c, st, "it is by %s of realm %s, but its key %s is bound by realm %s's key; only realm %s binds keys to its identities",
				st.By.Identity, author, did, keyRealms[did], author)
		case d.Realm != author:
			return nil, refuseStance(c, st, "it is by %s of realm %s, but signed as a stance of realm %s", st.By.Identity, author, d.Realm)
		}
		if d.Realm == claimRealm && c.Origin != nil && d.Claim == c.Origin.Claim {
			vouched = true
		}
		dids = append(dids, did)
	}
	if !vouched {
		return nil, refuseClaim(c, "its origin is claim %s of realm %s, but it carries no stance signed in realm %s on it; realm %s speaks only for its own identities",
			c.Origin.Claim, claimRealm, claimRealm, exporter)
	}
	return dids, nil
}

func refuseClaim(c *importClaim, format string, args ...any) *Error {
	return Refuse(ReasonInvalidBody, "claim %s of realm %s: %s; nothing was written", c.ID, c.realm, fmt.Sprintf(format, args...))
}

func refuseStance(c *importClaim, st *importStance, format string, args ...any) *Error {
	return Refuse(ReasonInvalidBody, "%s by %s on claim %s of realm %s: %s; nothing was written", st.ID, st.By.Identity, c.ID, c.realm, fmt.Sprintf(format, args...))
}
