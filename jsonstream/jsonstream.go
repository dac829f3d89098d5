// Package jsonstream writes one JSON document as a stream — member by member, element by
// element — byte for byte as encoding/json would write the whole document, or as its
// canonical form (RFC 8785, JCS), so that memory holds one element at a time whatever the
// document's size (PROTOCOL.md § 19: answers are streamed). Indented, it writes what
// json.Indent makes of the compact document. Canonical, it hashes the canonical bytes as they
// go, so that a document can be signed (eddsa-jcs-2022 signs the SHA-256 of the canonical
// document) after its last member and carry its proof as a last member, outside the bytes
// the proof covers.
package jsonstream

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"unicode/utf16"

	"github.com/gowebpki/jcs"
)

// Options say how the document is written.
type Options struct {
	// Canonical writes every value in JCS form (members sorted, strings and numbers as JCS
	// writes them) and hashes the document; the caller writes an object's members in
	// ascending order of their names (UTF-16 code units), which the writer checks.
	// Otherwise values are written as encoding/json writes them (without HTML escapes), and
	// members in the order given.
	Canonical bool
	// Indent indents the document as json.Indent(dst, doc, "", Indent) does; "" writes it
	// compact.
	Indent string
}

// Writer writes one document. Its errors stick: after the first, every call answers it.
type Writer struct {
	opts   Options
	out    *bufio.Writer
	indent *indenter
	sum    hash.Hash // the canonical bytes so far; nil once Digest has closed it
	stack  []frame
	buf    bytes.Buffer
	err    error
}

// frame is one open object or array.
type frame struct {
	object bool
	count  int
	last   []uint16 // the last member's name, as JCS orders names
}

// New begins a document on w whose top level is an object.
func New(w io.Writer, opts Options) *Writer {
	jw := &Writer{opts: opts, out: bufio.NewWriterSize(w, 32<<10)}
	if opts.Indent != "" {
		jw.indent = &indenter{out: jw.out, indent: opts.Indent}
	}
	if opts.Canonical {
		jw.sum = sha256.New()
	}
	jw.emit([]byte("{"))
	jw.stack = append(jw.stack, frame{object: true})
	return jw
}

// Put writes a member name: v of the innermost object, or (name "") an element v of the
// innermost array.
func (w *Writer) Put(name string, v any) error {
	if w.err != nil {
		return w.err
	}
	data, err := w.encode(v)
	if err != nil {
		return w.fail(err)
	}
	if err := w.key(name); err != nil {
		return err
	}
	w.emit(data)
	return w.err
}

// PutRaw is Put of a value already encoded as JSON.
func (w *Writer) PutRaw(name string, raw json.RawMessage) error { return w.Put(name, raw) }

// BeginObject opens an object: a member name of the innermost object, or (name "") an
// element of the innermost array. End closes it.
func (w *Writer) BeginObject(name string) error { return w.begin(name, true) }

// BeginArray opens an array, as BeginObject an object.
func (w *Writer) BeginArray(name string) error { return w.begin(name, false) }

func (w *Writer) begin(name string, object bool) error {
	if err := w.key(name); err != nil {
		return err
	}
	if object {
		w.emit([]byte("{"))
	} else {
		w.emit([]byte("["))
	}
	w.stack = append(w.stack, frame{object: object})
	return w.err
}

// Array writes the member name, an array of the elements each puts, in order; with
// omitEmpty an array that gets no element is left out (as encoding/json's omitempty).
func (w *Writer) Array(name string, omitEmpty bool, each func(put func(v any) error) error) error {
	begun := false
	begin := func() error {
		if !begun {
			begun = true
			return w.BeginArray(name)
		}
		return nil
	}
	if !omitEmpty {
		if err := begin(); err != nil {
			return err
		}
	}
	err := each(func(v any) error {
		if err := begin(); err != nil {
			return err
		}
		return w.Put("", v)
	})
	if err != nil {
		return w.fail(err)
	}
	if !begun {
		return w.err
	}
	return w.End()
}

// End closes the innermost object or array (not the document's own: Close does).
func (w *Writer) End() error {
	if w.err != nil {
		return w.err
	}
	if len(w.stack) < 2 {
		return w.fail(errors.New("jsonstream: End with no object or array open but the document"))
	}
	w.close()
	return w.err
}

func (w *Writer) close() {
	top := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	if top.object {
		w.emit([]byte("}"))
	} else {
		w.emit([]byte("]"))
	}
}

// Digest is the SHA-256 of the canonical document as written so far, closed: what an
// eddsa-jcs-2022 proof of it signs. Only the document's own object may be open; nothing but
// Trailer may follow.
func (w *Writer) Digest() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.sum == nil || len(w.stack) != 1 {
		return nil, w.fail(errors.New("jsonstream: Digest of a document that is not canonical, or with an object or array open"))
	}
	w.sum.Write([]byte("}"))
	out := w.sum.Sum(nil)
	w.sum = nil
	return out, nil
}

// Trailer writes the last member of the document, after Digest: outside the hashed bytes
// and out of the order of names (a proof).
func (w *Writer) Trailer(name string, v any) error {
	if w.err != nil {
		return w.err
	}
	if w.opts.Canonical && w.sum != nil {
		return w.fail(errors.New("jsonstream: Trailer before Digest"))
	}
	data, err := w.encode(v)
	if err != nil {
		return w.fail(err)
	}
	w.stack[0].last = nil
	if err := w.key(name); err != nil {
		return err
	}
	w.emit(data)
	return w.err
}

// Close ends the document (closing what is open), writes a line break after it, as
// json.Encoder does, and flushes.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	for len(w.stack) > 0 {
		w.close()
	}
	if w.err == nil {
		_, w.err = w.out.Write([]byte("\n"))
	}
	if w.err == nil {
		w.err = w.out.Flush()
	}
	return w.err
}

// Flush sends what is buffered on.
func (w *Writer) Flush() error {
	if w.err == nil {
		w.err = w.out.Flush()
	}
	return w.err
}

// key writes what comes before a value in the innermost container: a comma after an earlier
// one, and in an object the member's name, checked to follow the last in canonical order.
func (w *Writer) key(name string) error {
	if w.err != nil {
		return w.err
	}
	if len(w.stack) == 0 {
		return w.fail(errors.New("jsonstream: the document is closed"))
	}
	top := &w.stack[len(w.stack)-1]
	if top.object == (name == "") {
		return w.fail(fmt.Errorf("jsonstream: a member needs a name in an object and none in an array (%q)", name))
	}
	if top.count > 0 {
		w.emit([]byte(","))
	}
	top.count++
	if !top.object {
		return w.err
	}
	if w.opts.Canonical {
		units := utf16.Encode([]rune(name))
		if top.last != nil && compareUnits(top.last, units) >= 0 {
			return w.fail(fmt.Errorf("jsonstream: member %q out of canonical order", name))
		}
		top.last = units
	}
	data, err := w.encode(name)
	if err != nil {
		return w.fail(err)
	}
	w.emit(append(data, ':'))
	return w.err
}

// encode is v's JSON, compact, canonical when the document is.
func (w *Writer) encode(v any) ([]byte, error) {
	w.buf.Reset()
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	data := bytes.TrimSuffix(w.buf.Bytes(), []byte("\n"))
	if w.opts.Canonical {
		return jcs.Transform(data)
	}
	return append([]byte(nil), data...), nil
}

// emit writes compact bytes of the document: hashed when canonical, indented when asked.
func (w *Writer) emit(p []byte) {
	if w.err != nil {
		return
	}
	if w.sum != nil {
		w.sum.Write(p)
	}
	if w.indent != nil {
		w.err = w.indent.write(p)
		return
	}
	_, w.err = w.out.Write(p)
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

func compareUnits(a, b []uint16) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}
