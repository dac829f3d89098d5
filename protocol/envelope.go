package protocol

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// § 2: the envelope.

// Envelope is a decoded, valid request to speak.
type Envelope struct {
	Kind       Kind
	Thread     int64 // 0: absent
	Parent     int64 // 0: absent
	Extension  string
	Body       string
	Provenance Provenance
	// Room is the room of an ask that opens a thread (§ 16): rm_<n>, <n> or a name; "" for
	// general.
	Room string
}

// Provenance says where a message came from; both fields are optional.
type Provenance struct {
	Model  *string `json:"model,omitempty"`
	Client *string `json:"client,omitempty"`
}

// DecodeEnvelope reads an envelope strictly (§ 2): unknown fields at any level, a missing or
// unknown kind, an empty or over-long body, and ids of the wrong form are refused with
// invalid_body naming the field; the fields the server sets are ignored.
func DecodeEnvelope(raw []byte, limits Limits) (*Envelope, *Error) {
	o, err := decodeObject(raw, "")
	if err != nil {
		return nil, err
	}
	o.drop("id", "author_kind", "created_at")
	env := &Envelope{}

	kind, ok, err := o.str("kind")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field kind is missing; one of ask, answer, note, decide, close, reopen, defer, reject, obsolete")
	}
	if !IsKind(Kind(kind)) {
		return nil, Refuse(ReasonInvalidBody, "field kind %q is not one of ask, answer, note, decide, close, reopen, defer, reject, obsolete", kind)
	}
	env.Kind = Kind(kind)

	if env.Thread, _, err = o.id("thread", "th_"); err != nil {
		return nil, err
	}
	if env.Parent, _, err = o.id("parent", "msg_"); err != nil {
		return nil, err
	}
	if env.Extension, err = decodeFrom(o, limits); err != nil {
		return nil, err
	}

	body, ok, err := o.str("body")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field body is missing")
	}
	if err := checkText("body", body, limits.BodyMaxChars); err != nil {
		return nil, err
	}
	env.Body = body

	if env.Provenance, err = decodeProvenance(o, limits); err != nil {
		return nil, err
	}
	if env.Room, _, err = o.room("room"); err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if env.Thread == 0 && env.Parent == 0 && env.Kind != KindAsk {
		return nil, Refuse(ReasonInvalidBody, "field thread is missing; only an ask may open a new thread")
	}
	if env.Room != "" && (env.Thread != 0 || env.Parent != 0) {
		return nil, Refuse(ReasonInvalidBody, "field room is only for an ask that opens a thread; a thread changes room by a human's move")
	}
	return env, nil
}

// decodeFrom reads the optional from object: only extension (identity is set by the server).
func decodeFrom(o *object, limits Limits) (string, *Error) {
	from, ok, err := o.sub("from")
	if err != nil || !ok {
		return "", err
	}
	from.drop("identity")
	ext, _, err := from.str("extension")
	if err != nil {
		return "", err
	}
	if err := from.rest(); err != nil {
		return "", err
	}
	if err := CheckExtension("from.extension", ext, limits); err != nil {
		return "", err
	}
	return ext, nil
}

// CheckExtension validates an extension: "" is the default, else the pattern of § 1 within
// extension_max_chars. field names it in the refusal.
func CheckExtension(field, ext string, limits Limits) *Error {
	if ext == "" {
		return nil
	}
	if n := utf8.RuneCountInString(ext); n > limits.ExtensionMaxChars {
		return Refuse(ReasonInvalidBody, "field %s has %d characters; at most %d", field, n, limits.ExtensionMaxChars)
	}
	if !extensionChars(ext) {
		return Refuse(ReasonInvalidBody, "field %s must match ^[A-Za-z0-9][A-Za-z0-9._-]*$", field)
	}
	return nil
}

func extensionChars(s string) bool {
	for i, r := range s {
		alnum := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !alnum && (i == 0 || !strings.ContainsRune("._-", r)) {
			return false
		}
	}
	return true
}

// decodeProvenance reads the optional provenance object.
func decodeProvenance(o *object, limits Limits) (Provenance, *Error) {
	var p Provenance
	prov, ok, err := o.sub("provenance")
	if err != nil || !ok {
		return p, err
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"model", &p.Model}, {"client", &p.Client}} {
		v, ok, err := prov.str(f.name)
		if err != nil {
			return p, err
		}
		if !ok {
			continue
		}
		if n := utf8.RuneCountInString(v); n > limits.ProvenanceFieldMaxChars {
			return p, Refuse(ReasonInvalidBody, "field provenance.%s has %d characters; at most %d", f.name, n, limits.ProvenanceFieldMaxChars)
		}
		*f.dst = &v
	}
	return p, prov.rest()
}

// titleMaxChars is the most code points a thread title has.
const titleMaxChars = 120

// Title is the thread title an opening ask gives: its first line, at most 120 code points,
// cut between two characters as a reader sees them (grapheme clusters), never inside one: a
// flag, an accented letter or a family emoji is kept whole or left out.
func Title(body string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) <= titleMaxChars {
		return line
	}
	var title strings.Builder
	n := 0
	for g := uniseg.NewGraphemes(line); g.Next(); {
		runes := len(g.Runes())
		if n+runes > titleMaxChars {
			break
		}
		title.WriteString(g.Str())
		n += runes
	}
	return title.String()
}

// rawJSON helps decoders built from query strings: a JSON string value.
func rawJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
