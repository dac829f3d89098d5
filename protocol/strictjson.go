package protocol

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// What encoding/json lets through and the envelope must not (§ 2, § 9): text that is not
// UTF-8, escapes of lone UTF-16 surrogates (both would be stored as U+FFFD, a different text
// than the one sent), U+0000 (which no database stores as text), and an object that names a
// key twice (one reader takes the first, encoding/json the last: two readings of one request).

// checkUTF8 refuses input that is not valid UTF-8 anywhere.
func checkUTF8(raw []byte) *Error {
	if !utf8.Valid(raw) {
		return Refuse(ReasonInvalidBody, "the request body is not valid UTF-8")
	}
	return nil
}

// checkStringEscapes refuses, in the raw JSON of one value, a \u escape of U+0000 and a \u
// escape of a UTF-16 surrogate that is not half of a pair. field names the value.
func checkStringEscapes(field string, raw []byte) *Error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] != 'u' {
			i++ // a two-character escape such as \" or \\
			continue
		}
		r, ok := escapedRune(raw, i)
		if !ok {
			continue // not well-formed; the JSON decoder answers that
		}
		switch {
		case r == 0:
			return Refuse(ReasonInvalidBody, "field %s contains U+0000, which is not allowed", field)
		case r >= 0xDC00 && r <= 0xDFFF:
			return Refuse(ReasonInvalidBody, "field %s contains a lone UTF-16 surrogate (\\u%04x)", field, r)
		case r >= 0xD800 && r <= 0xDBFF:
			low, ok := escapedRune(raw, i+6)
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return Refuse(ReasonInvalidBody, "field %s contains a lone UTF-16 surrogate (\\u%04x)", field, r)
			}
			i += 6
		}
		i += 5
	}
	return nil
}

// escapedRune reads the \uXXXX escape at raw[i:].
func escapedRune(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range raw[i+2 : i+6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// keyCount counts the keys of the JSON object raw at its own level, without allocating: a
// count above the number of distinct keys decoded means a key is named twice. raw is known
// to be one valid JSON object.
func keyCount(raw []byte) int {
	depth, n := 0, 0
	inString, escaped, expectKey := false, false, false
	for _, c := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if depth == 1 && expectKey {
				n++
				expectKey = false
			}
		case '{', '[':
			depth++
			expectKey = depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	return n
}

// duplicateKey returns a key that the JSON object raw names more than once, at its own
// level. raw is known to be one valid JSON object.
func duplicateKey(raw []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := tok.(string)
		if seen[key] {
			return key, true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}
