package protocol

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// Reading an import (§ 14): another realm's export is read as it arrives, within
// import_max_bytes. Anything larger is payload_too_large as soon as the byte past the limit
// arrives, and input that is no JSON at all (GraphML, DOT, the zeros of /dev/zero) is refused
// at its first byte. The jsonl dataset is parsed line by line as it streams, its custody
// checked in the same pass (graph.CheckDataset), so that what stays in memory is what the
// parsed dataset needs; the JSON export, whose proof covers the whole document, is held
// whole — at most import_max_bytes — while it is checked.

// importSniff is how much of an import is looked at to tell a dataset (whose first line is a
// short room or thread line) from a JSON export.
const importSniff = 64 << 10

// ImportFrom imports what r holds — the JSON export or the jsonl dataset — into thread
// threadID (0: a new thread per source thread), as a (the operator at the command line).
func (s *Service) ImportFrom(ctx context.Context, a *Actor, r io.Reader, threadID int64) (*ImportResult, error) {
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	in, dataset, err := s.openImport(r)
	if err != nil {
		return nil, err
	}
	if !dataset {
		data, err := readAllImport(in)
		if err != nil {
			return nil, err
		}
		return s.ImportExport(ctx, a, data, threadID)
	}
	src, refusal := readDatasetStream(in)
	if refusal != nil {
		return nil, refusal
	}
	return s.importSource(ctx, a, src, threadID)
}

// ReadImport reads the body of POST /v1/imports from r within import_max_bytes, refusing
// what is no JSON at its first byte and what is larger as soon as it is.
func (s *Service) ReadImport(r io.Reader) ([]byte, error) {
	in, _, err := s.openImport(r)
	if err != nil {
		return nil, err
	}
	return readAllImport(in)
}

// openImport begins to read an import: bounded by import_max_bytes, its first byte the '{'
// of a JSON object. It answers the reader positioned at the start and whether the input is
// a dataset.
func (s *Service) openImport(r io.Reader) (*bufio.Reader, bool, error) {
	in := bufio.NewReaderSize(&importLimit{r: r, left: int64(s.limits.ImportMaxBytes), max: s.limits.ImportMaxBytes}, importSniff)
	for {
		b, err := in.ReadByte()
		if err == io.EOF {
			return nil, false, Refuse(ReasonInvalidBody, "the import is empty: give the JSON export or the jsonl dataset (parley export --format json or jsonl)")
		}
		if err != nil {
			return nil, false, importReadError(err)
		}
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' {
			continue
		}
		_ = in.UnreadByte()
		if b != '{' {
			return nil, false, notAnExport(in)
		}
		break
	}
	head, err := in.Peek(importSniff)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, false, importReadError(err)
	}
	first, _, _ := bytes.Cut(head, []byte("\n"))
	return in, isDataset(first), nil
}

// notAnExport refuses an import that does not begin with a JSON object, naming what it is.
func notAnExport(in *bufio.Reader) *Error {
	head, _ := in.Peek(len("digraph"))
	switch {
	case bytes.HasPrefix(head, []byte("<")), bytes.HasPrefix(head, []byte("digraph")):
		return Refuse(ReasonInvalidBody, "the import takes the JSON export or the jsonl dataset (parley export --format json or jsonl), not GraphML or DOT")
	default:
		return Refuse(ReasonInvalidBody, "the import is not a JSON export nor a jsonl dataset (parley export --format json or jsonl): it does not begin with a JSON object")
	}
}

// readAllImport reads the rest of an import into memory, within its bound.
func readAllImport(in io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(in); err != nil {
		return nil, importReadError(err)
	}
	return buf.Bytes(), nil
}

// importReadError is a failure to read an import: the refusal of a body too large as it is,
// anything else the input's own failure.
func importReadError(err error) error {
	if e, ok := AsError(err); ok {
		return e
	}
	return Refuse(ReasonInvalidBody, "the import cannot be read: %v", err)
}

// importLimit reads at most max bytes of r, and answers payload_too_large (importTooLarge)
// when one more arrives: a larger import is refused as soon as it is, before the rest of it is
// read.
type importLimit struct {
	r    io.Reader
	left int64
	max  int
}

func (l *importLimit) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, importTooLarge(l.max)
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
