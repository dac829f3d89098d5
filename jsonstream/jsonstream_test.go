package jsonstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

type item struct {
	Name  string          `json:"name"`
	Count int             `json:"count"`
	Ratio float64         `json:"ratio"`
	Tags  []string        `json:"tags"`
	Raw   json.RawMessage `json:"raw,omitempty"`
	Empty map[string]any  `json:"empty"`
}

// awkward are values whose encodings differ between encoding/json and JCS, or that an
// indenter could mistake for punctuation.
var awkward = []item{
	{Name: `quote " backslash \ slash / colon : comma , brackets {[]}`, Count: 1, Ratio: 0.1, Tags: []string{}},
	{Name: "html <b>&amp;</b>, line\u2028separator, tab\tnew\nline, \u0001 control, é, 😀", Count: -3, Ratio: 1e21,
		Tags: []string{"a", "", "z"}, Raw: json.RawMessage(` { "z" : [ 1 , 2 ] , "a" : "\u003c" } `), Empty: map[string]any{}},
	{Name: `ends with a backslash \`, Ratio: 123456789.125, Tags: nil},
}

// The streamed document is, byte for byte, what encoding/json (with json.Indent) or JCS
// writes of the whole, compact or indented, and a canonical one's digest is the SHA-256 of
// its JCS form: what an eddsa-jcs-2022 proof signs.
func TestStreamEqualsTheWholeDocument(t *testing.T) {
	whole := map[string]any{"alpha": "first", "items": awkward, "nested": map[string]any{"b": []any{}, "a": map[string]any{}}, "zeta": 42}
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"plain compact", Options{}},
		{"plain indented", Options{Indent: "  "}},
		{"canonical compact", Options{Canonical: true}},
		{"canonical indented", Options{Canonical: true, Indent: "  "}},
		{"canonical tab-indented", Options{Canonical: true, Indent: "\t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			w := New(&got, tc.opts)
			must(t, w.Put("alpha", "first"))
			must(t, w.BeginArray("items"))
			for _, it := range awkward {
				must(t, w.Put("", it))
			}
			must(t, w.End())
			must(t, w.BeginObject("nested"))
			if tc.opts.Canonical {
				must(t, w.BeginObject("a"))
				must(t, w.End())
				must(t, w.BeginArray("b"))
				must(t, w.End())
			} else {
				must(t, w.BeginArray("b"))
				must(t, w.End())
				must(t, w.BeginObject("a"))
				must(t, w.End())
			}
			must(t, w.End())
			must(t, w.Put("zeta", 42))
			var digest []byte
			if tc.opts.Canonical {
				var err error
				digest, err = w.Digest()
				must(t, err)
			}
			must(t, w.Close())

			want := wholeDocument(t, whole, tc.opts)
			if !tc.opts.Canonical {
				// encoding/json writes a map's members sorted: the stream wrote nested's
				// members as b, a — compare with that order.
				want = wholeDocument(t, orderedWhole(t), tc.opts)
			}
			if got.String() != string(want) {
				t.Errorf("streamed:\n%s\nwhole:\n%s", got.String(), want)
			}
			if tc.opts.Canonical {
				canon, err := jcs.Transform(want)
				must(t, err)
				if sum := sha256.Sum256(canon); !bytes.Equal(digest, sum[:]) {
					t.Errorf("the digest is not the SHA-256 of the canonical document")
				}
			}
		})
	}
}

// wholeDocument is v as encoding/json (or JCS) writes it whole, indented as asked, with a
// line break after it.
func wholeDocument(t *testing.T, v any, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	must(t, enc.Encode(v))
	doc := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if opts.Canonical {
		var err error
		doc, err = jcs.Transform(doc)
		must(t, err)
	}
	if opts.Indent != "" {
		var out bytes.Buffer
		must(t, json.Indent(&out, doc, "", opts.Indent))
		doc = out.Bytes()
	}
	return append(doc, '\n')
}

// orderedWhole is the document with nested's members in the order the plain stream wrote
// them (b before a), as a struct keeps them.
func orderedWhole(t *testing.T) any {
	t.Helper()
	return struct {
		Alpha  string `json:"alpha"`
		Items  []item `json:"items"`
		Nested struct {
			B []any          `json:"b"`
			A map[string]any `json:"a"`
		} `json:"nested"`
		Zeta int `json:"zeta"`
	}{Alpha: "first", Items: awkward, Nested: struct {
		B []any          `json:"b"`
		A map[string]any `json:"a"`
	}{B: []any{}, A: map[string]any{}}, Zeta: 42}
}

// A proof written after the digest is the document's last member, outside the hashed bytes.
func TestTrailerFollowsTheDigest(t *testing.T) {
	var got bytes.Buffer
	w := New(&got, Options{Canonical: true, Indent: "  "})
	must(t, w.Put("b", 1))
	must(t, w.Put("c", 2))
	if err := w.Trailer("proof", "x"); err == nil {
		t.Fatal("a trailer before the digest was written")
	}
	w = New(&got, Options{Canonical: true})
	must(t, w.Put("b", 1))
	must(t, w.Put("c", 2))
	digest, err := w.Digest()
	must(t, err)
	must(t, w.Trailer("a", map[string]string{"z": "1", "y": "2"}))
	must(t, w.Close())
	if want := `{"b":1,"c":2,"a":{"y":"2","z":"1"}}` + "\n"; got.String() != want {
		t.Errorf("got %s, want %s", got.String(), want)
	}
	if sum := sha256.Sum256([]byte(`{"b":1,"c":2}`)); !bytes.Equal(digest, sum[:]) {
		t.Error("the digest covers more or less than the members before the trailer")
	}
}

// Members out of canonical order, a named element or an unnamed member are refused, and the
// error sticks.
func TestMisuseIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(w *Writer) error
	}{
		{"out of order", func(w *Writer) error { _ = w.Put("b", 1); return w.Put("a", 2) }},
		{"twice", func(w *Writer) error { _ = w.Put("a", 1); return w.Put("a", 2) }},
		{"unnamed member", func(w *Writer) error { return w.Put("", 1) }},
		{"named element", func(w *Writer) error { _ = w.BeginArray("a"); return w.Put("x", 1) }},
		{"end of the document", func(w *Writer) error { return w.End() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := New(new(bytes.Buffer), Options{Canonical: true})
			err := tc.fn(w)
			if err == nil || !strings.HasPrefix(err.Error(), "jsonstream:") {
				t.Fatalf("got %v", err)
			}
			if w.Close() != err {
				t.Error("the error did not stick")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
