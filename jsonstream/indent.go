package jsonstream

import "bufio"

// indenter is json.Indent(dst, src, "", indent) as a stream: it takes compact JSON in
// pieces cut anywhere and writes what json.Indent writes of the whole — a line and the
// depth's indent after each opening bracket and comma and before each closing bracket, a
// space after each colon, an empty object or array left as {} or [], strings untouched.
type indenter struct {
	out        *bufio.Writer
	indent     string
	depth      int
	needIndent bool // an object or array was opened: its first value goes on a new line
	inString   bool
	escaped    bool
}

func (d *indenter) write(p []byte) error {
	for _, c := range p {
		if d.inString {
			d.out.WriteByte(c)
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if d.needIndent && c != '}' && c != ']' {
			d.needIndent = false
			d.depth++
			d.newline()
		}
		switch c {
		case '"':
			d.inString = true
			d.out.WriteByte(c)
		case '{', '[':
			d.needIndent = true
			d.out.WriteByte(c)
		case ',':
			d.out.WriteByte(c)
			d.newline()
		case ':':
			d.out.WriteByte(c)
			d.out.WriteByte(' ')
		case '}', ']':
			if d.needIndent {
				d.needIndent = false
			} else {
				d.depth--
				d.newline()
			}
			d.out.WriteByte(c)
		default:
			d.out.WriteByte(c)
		}
	}
	// bufio.Writer keeps its first error and answers it from every later call.
	_, err := d.out.Write(nil)
	return err
}

func (d *indenter) newline() {
	d.out.WriteByte('\n')
	for range d.depth {
		d.out.WriteString(d.indent)
	}
}
