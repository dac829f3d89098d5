package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Strict decoding shared by every operation's input: one JSON object, known fields only,
// null as absent. Each decoder names the offending field in its message.

// object is a decoded JSON object whose fields are taken one by one; what is left at the end
// is unknown and refused.
type object struct {
	path   string // "" at the top level, "from." inside from
	fields map[string]json.RawMessage
}

// decodeObject reads raw as exactly one JSON object.
func decodeObject(raw []byte, path string) (*object, *Error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if path == "" {
			return nil, Refuse(ReasonInvalidBody, "the request body must be a JSON object")
		}
		return nil, Refuse(ReasonInvalidBody, "field %s must be an object", strings.TrimSuffix(path, "."))
	}
	if path == "" {
		if err := checkUTF8(trimmed); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, Refuse(ReasonInvalidBody, "the request body is not valid JSON: %s", jsonProblem(err))
	}
	// trimmed ends in non-space, so anything after the object is data (More misses a stray
	// "}" or "]").
	if dec.InputOffset() != int64(len(trimmed)) {
		return nil, Refuse(ReasonInvalidBody, "the request body has data after the JSON object")
	}
	// The top level checks every depth at once; an object inside it was checked with it.
	if path == "" {
		if err := CheckRepeatedKeys(trimmed); err != nil {
			return nil, err
		}
	}
	for k, v := range fields {
		if isNull(v) {
			delete(fields, k) // § 2: null for an optional field counts as absent
		}
	}
	o := &object{path: path, fields: fields}
	if path == "" {
		// Every operation's input takes the protocol version, optional (§ 2, § 12).
		if err := o.version(); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// version takes the optional "parley" field, which must be the string "1".
func (o *object) version() *Error {
	raw, ok := o.take("parley")
	if !ok {
		return nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return Refuse(ReasonInvalidBody, `field parley must be the string "1"`)
	}
	if v != "1" {
		return Refuse(ReasonInvalidBody, `field parley must be the string "1", not %q`, v)
	}
	return nil
}

func jsonProblem(err error) string {
	msg := err.Error()
	return strings.TrimPrefix(msg, "json: ")
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// take removes a field and reports whether it was present.
func (o *object) take(name string) (json.RawMessage, bool) {
	v, ok := o.fields[name]
	delete(o.fields, name)
	return v, ok
}

// drop removes a field the server sets itself and ignores.
func (o *object) drop(names ...string) {
	for _, n := range names {
		delete(o.fields, n)
	}
}

// rest refuses whatever field is left: it is not part of the input.
func (o *object) rest() *Error {
	if len(o.fields) == 0 {
		return nil
	}
	names := make([]string, 0, len(o.fields))
	for k := range o.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return Refuse(ReasonInvalidBody, "unknown field %s%s", o.path, names[0])
}

func (o *object) name(field string) string { return o.path + field }

// str takes an optional string field.
func (o *object) str(field string) (string, bool, *Error) {
	raw, ok := o.take(field)
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, Refuse(ReasonInvalidBody, "field %s must be a string", o.name(field))
	}
	if err := checkStringEscapes(o.name(field), raw); err != nil {
		return "", false, err
	}
	return s, true, nil
}

// sub takes an optional object field.
func (o *object) sub(field string) (*object, bool, *Error) {
	raw, ok := o.take(field)
	if !ok {
		return nil, false, nil
	}
	inner, err := decodeObject(raw, o.name(field)+".")
	return inner, err == nil, err
}

// count takes an optional whole-number field (a JSON number or a string of digits, so that
// query parameters decode the same way) in [min, max]; values above max are clamped when
// clamp is set.
func (o *object) count(field string, min, max int, clamp bool) (int, bool, *Error) {
	raw, ok := o.take(field)
	if !ok {
		return 0, false, nil
	}
	n, good := wholeNumber(raw)
	if !good && clamp && beyondInt64(raw) {
		n, good = int64(max), true // a number too large for int64 is above any limit, too
	}
	if !good || n < int64(min) || (!clamp && n > int64(max)) {
		return 0, false, Refuse(ReasonInvalidBody, "field %s must be a whole number from %d to %d", o.name(field), min, max)
	}
	if n > int64(max) {
		n = int64(max)
	}
	return int(n), true, nil
}

// wholeNumber reads a JSON integer or a string of digits.
func wholeNumber(raw json.RawMessage) (int64, bool) {
	text := strings.TrimSpace(string(raw))
	if strings.HasPrefix(text, `"`) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		text = s
	}
	if text == "" || len(text) > 19 {
		return 0, false
	}
	for _, r := range text {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil && n <= math.MaxInt64
}

// beyondInt64 reports whether raw is a whole number (a JSON integer or a string of digits)
// too large for int64.
func beyondInt64(raw json.RawMessage) bool {
	text := strings.TrimSpace(string(raw))
	if strings.HasPrefix(text, `"`) && json.Unmarshal(raw, &text) != nil {
		return false
	}
	if text == "" {
		return false
	}
	for _, r := range text {
		if r < '0' || r > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(text, 10, 64)
	return err != nil
}

// ParseID reads an id in the forms of § 2: "<prefix><n>", the bare JSON integer <n>, or a
// string of digits. It accepts a raw JSON value (from a body) or a plain string (from a path).
func ParseID(raw json.RawMessage, prefix string) (int64, bool) {
	text := strings.TrimSpace(string(raw))
	if strings.HasPrefix(text, `"`) {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		return ParseIDString(s, prefix)
	}
	if n, ok := wholeNumber(raw); ok && n > 0 {
		return n, true
	}
	return 0, false
}

// ParseIDString reads "<prefix><n>" or "<n>".
func ParseIDString(s, prefix string) (int64, bool) {
	s = strings.TrimPrefix(s, prefix)
	if strings.HasPrefix(s, "0") {
		return 0, false // one number, one spelling: th_01 is not th_1
	}
	n, ok := wholeNumber(json.RawMessage(strconv.Quote(s)))
	return n, ok && n > 0
}

// id takes an optional id field of the given prefix ("th_", "msg_", "cl_").
func (o *object) id(field, prefix string) (int64, bool, *Error) {
	raw, ok := o.take(field)
	if !ok {
		return 0, false, nil
	}
	n, good := ParseID(raw, prefix)
	if !good {
		return 0, false, Refuse(ReasonInvalidBody, "field %s must be %s<n>, a positive integer or a string of digits", o.name(field), prefix)
	}
	return n, true, nil
}

// text checks a required free-text field: 1 to max code points, not only white space or
// characters that show nothing.
func checkText(field, s string, max int) *Error {
	if strings.TrimFunc(s, invisible) == "" {
		return Refuse(ReasonInvalidBody, "field %s is empty", field).Detailed(field+"_empty", "Max", max)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return Refuse(ReasonInvalidBody, "field %s has %d characters; at most %d", field, n, max).Detailed(field+"_too_long", "Max", max, "Count", n)
	}
	return nil
}

// Formatting of ids.
func ThreadKey(id int64) string  { return "th_" + strconv.FormatInt(id, 10) }
func MessageKey(id int64) string { return "msg_" + strconv.FormatInt(id, 10) }
func EventKey(id int64) string   { return "ev_" + strconv.FormatInt(id, 10) }

// invisible reports whether r shows nothing on its own: white space, a format character
// (U+200B zero width space, U+FEFF, U+2060 word joiner …), a variation selector or another
// default-ignorable code point (U+3164 Hangul filler …). A text of only these is empty.
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
