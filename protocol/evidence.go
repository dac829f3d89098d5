package protocol

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// § 12: evidence is a pointer, never an opinion — { kind, ref, note? }, each kind with its
// own check of ref.

// Evidence is one item of proof as stored and returned.
type Evidence struct {
	Kind string  `json:"kind"`
	Ref  string  `json:"ref"`
	Note *string `json:"note,omitempty"`
	// Present is false on an imported artifact ref this store lacks (§ 14): it is kept as a
	// pointer, and nothing is served for it. Absent everywhere else.
	Present *bool `json:"present,omitempty"`
}

// EvidenceKind is one row of the table of evidence kinds: its name, what its ref is, and the
// check of a ref. A new kind is one more row.
type EvidenceKind struct {
	Kind  string `json:"kind"`
	About string `json:"ref"`
	// check answers why ref is not a valid pointer of this kind, or "".
	check func(ref string) string
	// stored: the ref must also name something in the artifact store.
	stored bool
}

// evidenceNoteMaxChars bounds an evidence item's note (§ 12).
const evidenceNoteMaxChars = 500

var (
	hashPattern   = regexp.MustCompile(`^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}|sha1:[0-9a-f]{40})$`)
	sha256Pattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	commitPattern = regexp.MustCompile(`^([^@\s]+@)?[0-9a-f]{7,64}$`)
)

func matches(p *regexp.Regexp, want string) func(string) string {
	return func(ref string) string {
		if p.MatchString(ref) {
			return ""
		}
		return "must be " + want
	}
}

func freeText(string) string { return "" }

func absoluteHTTPURL(ref string) string {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an absolute http(s) URL"
	}
	return ""
}

// EvidenceKinds is the table of § 12, in its order.
var EvidenceKinds = []EvidenceKind{
	{Kind: "url", About: "an absolute http(s) URL", check: absoluteHTTPURL},
	{Kind: "hash", About: "<algo>:<hex>: sha256 (64 hex), sha512 (128) or sha1 (40), lower case", check: matches(hashPattern, "sha256:<64 hex>, sha512:<128 hex> or sha1:<40 hex>")},
	{Kind: "artifact", About: "sha256:<64 hex> of an artifact in this instance's store", check: matches(sha256Pattern, "sha256:<64 hex> of a stored artifact"), stored: true},
	{Kind: "commit", About: "[<repo>@]<7-64 hex>", check: matches(commitPattern, "[<repo>@]<7 to 64 hex digits>")},
	{Kind: "log", About: "free text", check: freeText},
	{Kind: "reproducer", About: "free text", check: freeText},
	{Kind: "note", About: "free text", check: freeText},
	{Kind: "other", About: "free text", check: freeText},
}

func evidenceKind(name string) (EvidenceKind, bool) {
	for _, k := range EvidenceKinds {
		if k.Kind == name {
			return k, true
		}
	}
	return EvidenceKind{}, false
}

func evidenceKindNames() string {
	names := make([]string, len(EvidenceKinds))
	for i, k := range EvidenceKinds {
		names[i] = k.Kind
	}
	return strings.Join(names, ", ")
}

// decodeEvidence takes the evidence field: an array of 1 (when required) to
// evidence_max_items items, each checked by its kind. The refs that must name a stored
// artifact are returned for the existence check, which needs the database.
func decodeEvidence(o *object, required bool, limits Limits) ([]Evidence, []string, *Error) {
	raw, ok := o.take("evidence")
	if !ok {
		if required {
			return nil, nil, Refuse(ReasonInvalidBody, "field evidence is missing; at least one item of proof is needed")
		}
		return []Evidence{}, nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, Refuse(ReasonInvalidBody, "field evidence must be an array of {kind, ref, note?}")
	}
	if required && len(items) == 0 {
		return nil, nil, Refuse(ReasonInvalidBody, "field evidence is empty; at least one item of proof is needed")
	}
	if len(items) > limits.EvidenceMaxItems {
		return nil, nil, Refuse(ReasonInvalidBody, "field evidence has %d items; at most %d", len(items), limits.EvidenceMaxItems)
	}
	out := make([]Evidence, 0, len(items))
	var stored []string
	for i, item := range items {
		e, isStored, err := decodeEvidenceItem(item, i, limits)
		if err != nil {
			return nil, nil, err
		}
		if isStored {
			stored = append(stored, e.Ref)
		}
		out = append(out, e)
	}
	return out, stored, nil
}

func decodeEvidenceItem(raw json.RawMessage, i int, limits Limits) (Evidence, bool, *Error) {
	var e Evidence
	o, err := decodeObject(raw, "evidence["+strconv.Itoa(i)+"].")
	if err != nil {
		return e, false, err
	}
	kind, ok, err := o.str("kind")
	if err != nil {
		return e, false, err
	}
	k, known := evidenceKind(kind)
	if !ok || !known {
		return e, false, Refuse(ReasonInvalidBody, "field %s must be one of %s", o.name("kind"), evidenceKindNames())
	}
	ref, ok, err := o.str("ref")
	if err != nil {
		return e, false, err
	}
	if !ok {
		return e, false, Refuse(ReasonInvalidBody, "field %s is missing", o.name("ref"))
	}
	if err := checkText(o.name("ref"), ref, limits.EvidenceRefMaxChars); err != nil {
		return e, false, err
	}
	if why := k.check(ref); why != "" {
		return e, false, Refuse(ReasonInvalidBody, "field %s of kind %s %s", o.name("ref"), kind, why)
	}
	note, hasNote, err := o.str("note")
	if err != nil {
		return e, false, err
	}
	if hasNote {
		if n := utf8.RuneCountInString(note); n > evidenceNoteMaxChars {
			return e, false, Refuse(ReasonInvalidBody, "field %s has %d characters; at most %d", o.name("note"), n, evidenceNoteMaxChars)
		}
		e.Note = &note
	}
	if err := o.rest(); err != nil {
		return e, false, err
	}
	e.Kind, e.Ref = kind, ref
	return e, k.stored, nil
}
