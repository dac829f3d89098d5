package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// § 14, an import obeys this forum's rules: every claim and stance it would write passes the
// checks a live assert, attest, refute or verify of this forum makes, by the same functions —
// the lengths and counts of § 8 and § 12 (statement, body, note, extension, provenance), the
// evidence kinds and their ref forms, a stance's own evidence, no attestation of one's own
// claim and one of each per identity. One item that fails refuses the whole import, naming
// it. An artifact ref this store lacks is the one difference from a live write: it is kept as
// a pointer, marked present: false, and nothing is served for it.

// importRules checks the claims and stances of src that the import would write, keeping what
// each says as the checks took it apart.
func (s *Service) importRules(ctx context.Context, src *importSource) error {
	present := map[string]bool{}
	for _, c := range src.claims {
		if c.originRealm() == s.realm {
			continue // this forum's own claim come back: nothing of it is written
		}
		if err := s.claimRules(ctx, c, present); err != nil {
			return importRefusal(err, "claim %s of realm %s", c.ID, src.realm)
		}
		once := map[string]bool{}
		for _, st := range c.stances {
			if err := s.stanceRules(ctx, c, st, once, present); err != nil {
				return importRefusal(err, "%s by %s on claim %s of realm %s", st.ID, st.By.Identity, c.ID, src.realm)
			}
		}
	}
	return nil
}

// importRefusal names the item a refusal is about, and keeps its reason; a fault stays one.
func importRefusal(err error, format string, args ...any) error {
	e, ok := AsError(err)
	if !ok {
		return err
	}
	return Refuse(e.Reason, "%s: %s; nothing was written", fmt.Sprintf(format, args...), e.Message)
}

// claimRules checks one claim as assert does.
func (s *Service) claimRules(ctx context.Context, c *importClaim, present map[string]bool) error {
	statement, _ := json.Marshal(c.Statement)
	o := importedInput(c.By, map[string]json.RawMessage{"statement": statement, "evidence": withoutPresence(c.Evidence), "provenance": c.Provenance})
	content, err := decodeClaimContent(o, s.limits)
	if err != nil {
		return err
	}
	prov, err := decodeProvenance(o, s.limits)
	if err != nil {
		return err
	}
	if err := o.rest(); err != nil {
		return err
	}
	if c.At.IsZero() {
		return Refuse(ReasonInvalidBody, "it carries no created_at")
	}
	if err := s.markAbsent(ctx, content.evidence, present); err != nil {
		return err
	}
	c.content, c.prov = content, prov
	return nil
}

// stanceRules checks one stance on c as attest, refute or verify does; once holds the
// identities that attested or verified c before it in the export.
func (s *Service) stanceRules(ctx context.Context, c *importClaim, st *importStance, once, present map[string]bool) error {
	op, ok := map[string]stanceOp{"attest": attestOp, "refute": refuteOp, "verify": verifyOp}[st.kind]
	if !ok {
		return Refuse(ReasonInvalidBody, "%q is no stance (attest, refute or verify)", st.kind)
	}
	fields := map[string]json.RawMessage{"evidence": withoutPresence(st.Evidence), "provenance": st.Provenance}
	for name, text := range map[string]*string{"note": st.Note, "body": st.Body} {
		if text != nil {
			fields[name], _ = json.Marshal(*text)
		}
	}
	o := importedInput(st.By, fields)
	if _, err := decodeFrom(o, s.limits); err != nil {
		return err
	}
	in, _, err := decodeStanceContent(o, op, s.limits)
	if err != nil {
		return err
	}
	prov, err := decodeProvenance(o, s.limits)
	if err != nil {
		return err
	}
	if err := o.rest(); err != nil {
		return err
	}
	if st.At.IsZero() {
		return Refuse(ReasonInvalidBody, "it carries no at")
	}
	author := &Actor{Identity: importedIdentity(st.By.Identity, c.realm)}
	if err := CheckSelfAttestation(author, op.op, importedIdentity(c.By.Identity, c.realm)); err != nil {
		return err
	}
	key := string(op.op) + " " + author.Identity
	if err := CheckOncePerIdentity(author, op.op, 0, once[key]); err != nil {
		return Refuse(err.Reason, "%s takes this stance on claim %s a second time in this export; an identity attests a claim once and verifies it once", author.Identity, c.ID)
	}
	once[key] = true
	if err := s.markAbsent(ctx, in.evidence, present); err != nil {
		return err
	}
	st.content, st.prov = in, prov
	return nil
}

// importedInput is an imported item's fields as the input of the live operation that would
// have written it: from carries the author's extension. A null field is absent, as in any
// input (§ 2).
func importedInput(by Party, fields map[string]json.RawMessage) *object {
	o := &object{fields: map[string]json.RawMessage{}}
	for name, raw := range fields {
		if len(bytes.TrimSpace(raw)) > 0 && !isNull(raw) {
			o.fields[name] = raw
		}
	}
	if by.Extension != "" {
		o.fields["from"], _ = json.Marshal(map[string]string{"extension": by.Extension})
	}
	return o
}

// withoutPresence is exported evidence without what the exporting store marked of its
// artifacts (present): this store decides that for itself. Anything that is not an array of
// objects is left as it is, for the evidence check to refuse.
func withoutPresence(raw json.RawMessage) json.RawMessage {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return raw
	}
	marked := false
	for _, item := range items {
		if _, ok := item["present"]; ok {
			delete(item, "present")
			marked = true
		}
	}
	if !marked {
		return raw
	}
	out, err := json.Marshal(items)
	if err != nil {
		return raw
	}
	return out
}

// markAbsent marks each artifact ref of evidence that this store lacks present: false;
// present caches what the store answered.
func (s *Service) markAbsent(ctx context.Context, evidence []Evidence, present map[string]bool) error {
	for i := range evidence {
		e := &evidence[i]
		if k, _ := evidenceKind(e.Kind); !k.stored {
			continue
		}
		held, seen := present[e.Ref]
		if !seen && s.artifacts != nil {
			var err error
			if held, err = s.artifacts(ctx, e.Ref); err != nil {
				return fault(err)
			}
		}
		present[e.Ref] = held
		if !held {
			absent := false
			e.Present = &absent
		}
	}
	return nil
}
