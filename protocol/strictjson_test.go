package protocol_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

// RepeatedKey finds a key named twice in one object at any depth, compared as decoded, and
// names where; the same key in two objects, inside strings or in arrays is no repetition.
func TestRepeatedKey(t *testing.T) {
	long := strings.Repeat("k", 100)
	many := "" // 40 keys, more than a set kept for the next object holds
	for i := range 40 {
		many += `"k` + strconv.Itoa(i) + `":1,`
	}
	for _, c := range []struct {
		name, raw string
		path      string // "" when nothing is repeated
	}{
		{"none", `{"kind":"ask","body":"q"}`, ""},
		{"at the top", `{"body":"a","kind":"ask","body":"b"}`, "body"},
		{"escaped the second time", `{"body":"a","b\u006fdy":"b"}`, "body"},
		{"escaped both times", `{"\u0062ody":"a","b\u006fdy":"b"}`, "body"},
		{"in an object", `{"from":{"extension":"a","extension":"b"}}`, "from.extension"},
		{"in an array's object", `{"evidence":[{"kind":"a"},{"kind":"b","kind":"c"}]}`, "evidence[1].kind"},
		{"deep", `{"a":{"b":[1,[2,{"c":{"d":1,"d":2}}]]}}`, "a.b[1][1].c.d"},
		{"in the JSON-RPC envelope", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, "method"},
		{"in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send","arguments":{"body":"a"},"arguments":{"body":"b"}}}`, "params.arguments"},
		{"in arguments", `{"params":{"name":"send","arguments":{"kind":"ask","body":"a","body":"b"}}}`, "params.arguments.body"},
		{"in a top-level array", `[{"a":1},{"a":1,"a":2}]`, "[1].a"},
		{"a long key, cut", `{"` + long + `":1,"` + long + `":2}`, strings.Repeat("k", 64) + "…"},
		{"the same key in sibling objects", `{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`, ""},
		{"the same key at two depths", `{"x":{"x":{"x":1}}}`, ""},
		{"a key inside a string", `{"body":"{\"body\":1,\"body\":2}","kind":"ask"}`, ""},
		{"a string value equal to a key", `{"a":"a","b":"a"}`, ""},
		{"keys differing in case", `{"method":"a","Method":"b"}`, ""},
		{"an escaped quote in a key", `{"a\"b":1,"a\"c":2}`, ""},
		{"an escaped backslash before the quote", `{"a\\":1,"a\\":2}`, `a\`},
		{"not an object", `"body"`, ""},
		{"a small object after a large one at its depth", `{"a":{` + many + `"z":1},"b":{"k1":1,"z":1}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, repeated := protocol.RepeatedKey([]byte(c.raw))
			if repeated != (c.path != "") || path != c.path {
				t.Errorf("RepeatedKey(%.80s) = %q, %v; want %q", c.raw, path, repeated, c.path)
			}
		})
	}
}
