package protocol

import (
	"encoding/json"
	"strconv"
	"strings"
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

// RepeatedKey returns the path of the first key that an object in raw names twice, at any
// depth ("body", "from.extension", "evidence[1].kind"), or false when every object names
// each key once. Keys are compared as decoded, so "body" and "b\u006fdy" are one key. raw
// is meant to be valid JSON; what is not is answered by whoever parses it.
//
// It is the one check of repeated keys: for the bodies of every operation (decodeObject)
// and for MCP's JSON-RPC requests, whose arguments reach the operations. It makes one pass
// over the bytes and allocates only the keys it keeps.
func RepeatedKey(raw []byte) (string, bool) {
	var stack []scope
	keys := keySets{}
	expectKey := false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end, escaped := stringEnd(raw, i)
			if expectKey && len(stack) > 0 && stack[len(stack)-1].object {
				key := decodedKey(raw[i:end+1], escaped)
				top := &stack[len(stack)-1]
				seen := keys[len(stack)-1]
				if _, again := seen[key]; again {
					top.key = key
					return pathOf(stack), true
				}
				seen[key] = struct{}{}
				top.key = key
				expectKey = false
			}
			i = end
		case '{':
			stack = append(stack, scope{object: true})
			keys.open(len(stack) - 1)
			expectKey = true
		case '[':
			stack = append(stack, scope{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if len(stack) == 0 {
				continue // not valid JSON; whoever parses it refuses it
			}
			top := &stack[len(stack)-1]
			if top.object {
				expectKey = true
			} else {
				top.index++
			}
		}
	}
	return "", false
}

// CheckRepeatedKeys refuses, as invalid_body naming the field, a JSON object that names a
// key twice at any depth: for a transport that takes a body apart before the operation
// reads it (the HTTP binding adds a path's id to it), and would keep only one of the two.
func CheckRepeatedKeys(raw []byte) *Error {
	if key, repeated := RepeatedKey(raw); repeated {
		return Refuse(ReasonInvalidBody, "field %s appears more than once", key)
	}
	return nil
}

// scope is one object or array RepeatedKey is inside, with where in it it is.
type scope struct {
	object bool
	key    string // the object's key being read
	index  int    // the array's element being read
}

// keySets are the keys seen in each open object, one set per depth, reused from one object
// to the next at the same depth.
type keySets []map[string]struct{}

// maxReusedKeys bounds the set kept for the next object at a depth: clearing a map costs
// what it once held, and an object of many keys followed by many small ones must not pay it
// for each.
const maxReusedKeys = 32

// open gives depth an empty set.
func (k *keySets) open(depth int) {
	for len(*k) <= depth {
		*k = append(*k, nil)
	}
	switch m := (*k)[depth]; {
	case m == nil || len(m) > maxReusedKeys:
		(*k)[depth] = map[string]struct{}{}
	default:
		clear(m)
	}
}

// stringEnd returns the index of the quote that ends the string beginning at raw[start], and
// whether the string holds an escape.
func stringEnd(raw []byte, start int) (end int, escaped bool) {
	for i := start + 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return len(raw) - 1, escaped
}

// decodedKey is the key a quoted JSON string stands for.
func decodedKey(quoted []byte, escaped bool) string {
	if len(quoted) < 2 {
		return "" // a string that does not end: not valid JSON
	}
	if !escaped {
		return string(quoted[1 : len(quoted)-1])
	}
	var key string
	if json.Unmarshal(quoted, &key) != nil {
		return string(quoted) // not reached for valid JSON
	}
	return key
}

// maxKeyInPath bounds each key as a message names it, and maxPath the whole path: keys are
// the client's, of any length, nested to any depth.
const (
	maxKeyInPath = 64
	maxPath      = 256
)

// pathOf names where the scan stands: keys joined by dots, array elements by [i].
func pathOf(stack []scope) string {
	var b strings.Builder
	for _, s := range stack {
		if b.Len() > maxPath { // the path cut short, and the repeated key
			return b.String() + "…." + shortKey(stack[len(stack)-1].key)
		}
		if !s.object {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(shortKey(s.key))
	}
	return b.String()
}

// shortKey cuts key to maxKeyInPath bytes, between two characters.
func shortKey(key string) string {
	if len(key) <= maxKeyInPath {
		return key
	}
	cut := maxKeyInPath
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return key[:cut] + "…"
}
