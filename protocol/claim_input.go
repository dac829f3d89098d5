package protocol

import (
	"context"
	"encoding/json"
	"time"
)

// Decoding the inputs of the dialectic operations (§ 12): strict like the envelope, every
// refusal naming its field.

// claimInput is input for an operation on one claim: the claim field.
func claimInput(a *Actor, raw []byte) (*object, int64, *Error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, 0, err
	}
	id, ok, err := o.id("claim", "cl_")
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, Refuse(ReasonInvalidBody, "field claim is missing")
	}
	return o, id, nil
}

// claimInputFrom is claimInput with from, for the operations that speak: attest, refute, verify.
func claimInputFrom(a *Actor, raw []byte, limits Limits) (*object, int64, string, *Error) {
	o, id, err := claimInput(a, raw)
	if err != nil {
		return nil, 0, "", err
	}
	ext, err := decodeFrom(o, limits)
	return o, id, ext, err
}

// optionalText takes an optional free-text field of at most max code points.
func optionalText(o *object, field string, max int) (*string, *Error) {
	v, ok, err := o.str(field)
	if err != nil || !ok {
		return nil, err
	}
	if err := checkText(field, v, max); err != nil {
		return nil, err
	}
	return &v, nil
}

// requiredText takes a required free-text field of 1 to max code points.
func requiredText(o *object, field string, max int) (string, *Error) {
	v, ok, err := o.str(field)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", Refuse(ReasonInvalidBody, "field %s is missing", field).Detailed(field+"_empty", "Max", max)
	}
	return v, checkText(field, v, max)
}

// decodeSupersedes takes the optional supersedes field: distinct claim ids.
func decodeSupersedes(o *object, limits Limits) ([]int64, *Error) {
	raw, ok := o.take("supersedes")
	if !ok {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, Refuse(ReasonInvalidBody, "field supersedes must be an array of claim ids (cl_<n>)")
	}
	if len(items) > limits.EvidenceMaxItems {
		return nil, Refuse(ReasonInvalidBody, "field supersedes has %d items; at most %d", len(items), limits.EvidenceMaxItems)
	}
	seen := map[int64]bool{}
	var out []int64
	for _, item := range items {
		id, good := ParseID(item, "cl_")
		if !good {
			return nil, Refuse(ReasonInvalidBody, "field supersedes must hold claim ids cl_<n>, not %s", item)
		}
		if seen[id] {
			return nil, Refuse(ReasonInvalidBody, "field supersedes names %s twice", ClaimKey(id))
		}
		seen[id] = true
		out = append(out, id)
	}
	return out, nil
}

// decodeValidUntil takes the optional valid_until: RFC 3339, in the future.
func decodeValidUntil(o *object, now time.Time) (*time.Time, *Error) {
	v, ok, err := o.str("valid_until")
	if err != nil || !ok {
		return nil, err
	}
	t, perr := time.Parse(time.RFC3339Nano, v)
	if perr != nil {
		return nil, Refuse(ReasonInvalidBody, "field valid_until must be an RFC 3339 time, such as 2027-01-01T00:00:00Z")
	}
	if !t.After(now) {
		return nil, Refuse(ReasonInvalidBody, "field valid_until (%s) must be in the future", v)
	}
	t = t.UTC().Truncate(time.Microsecond)
	return &t, nil
}

// checkStored refuses evidence of kind artifact whose ref the artifact store does not hold.
func (s *Service) checkStored(ctx context.Context, refs []string) error {
	for _, ref := range refs {
		if s.artifacts == nil {
			return Refuse(ReasonInvalidBody, "evidence of kind artifact names %s, but this instance stores no artifacts", ref)
		}
		ok, err := s.artifacts(ctx, ref)
		if err != nil {
			return fault(err)
		}
		if !ok {
			return Refuse(ReasonInvalidBody, "evidence of kind artifact names %s, which is not in the artifact store", ref)
		}
	}
	return nil
}
