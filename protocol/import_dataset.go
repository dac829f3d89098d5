package protocol

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/parleyforum/parley/graph"
)

// Reading a JSON Lines dataset (§ 15) for an import (§ 14): the thread lines give the
// titles, the claim lines the claims, the stance lines their stances (each names its claim
// and its kind), the key lines the keys with their bindings, and the export line the realm,
// its key, the other realms it names and the proof. What it does not say the import does not
// need; whether it holds is graph.CheckDataset's to say, as for parley verify-export. The
// two read the dataset together, in one pass as it streams: the check reads it, and each
// line it reads is parsed for the import as it passes.

// isDataset reports whether data is a dataset: its first line is a dataset's line.
func isDataset(data []byte) bool {
	first, _, _ := bytes.Cut(bytes.TrimLeft(data, " \t\r\n"), []byte("\n"))
	return graph.LooksLikeDataset(first)
}

// datasetImportLine is what the import reads of a line, whatever its type.
type datasetImportLine struct {
	Type string `json:"type"`
	// thread
	ID    string `json:"id"`
	Title string `json:"title"`
	// stance
	Claim  string `json:"claim"`
	Stance string `json:"stance"`
	// export
	Realm    string            `json:"realm"`
	RealmKey string            `json:"realm_key"`
	Realms   map[string]string `json:"realms"`
	Proof    json.RawMessage   `json:"proof"`
}

// readDataset reads a dataset held in memory.
func readDataset(data []byte) (*importSource, *Error) {
	return readDatasetStream(bytes.NewReader(data))
}

// readDatasetStream reads a dataset from r into the form the import writes from, and checks
// its custody on the way.
func readDatasetStream(r io.Reader) (*importSource, *Error) {
	p := &datasetParser{src: &importSource{dataset: true, threads: map[string]string{}}, claims: map[string]*importClaim{}}
	report, err := graph.CheckDataset(io.TeeReader(r, p))
	switch {
	case p.refusal != nil:
		return nil, p.refusal
	case err != nil:
		if e, ok := AsError(err); ok {
			return nil, e // too large
		}
		return nil, Refuse(ReasonInvalidBody, "the dataset cannot be read: %v", err)
	}
	if refusal := p.finish(); refusal != nil {
		return nil, refusal
	}
	p.src.report = report
	return p.src, nil
}

// datasetParser takes the bytes of a dataset as they are read and parses each line when it
// is whole.
type datasetParser struct {
	src     *importSource
	claims  map[string]*importClaim
	partial []byte
	lineNo  int
	sawEnd  bool
	refusal *Error
}

// Write parses every line that p completes; the first line that cannot be read ends the
// reading with its refusal.
func (d *datasetParser) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && d.refusal == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			d.partial = append(d.partial, p...)
			break
		}
		line := p[:i]
		if len(d.partial) > 0 {
			line = append(d.partial, line...)
		}
		d.line(line)
		d.partial = d.partial[:0]
		p = p[i+1:]
	}
	if d.refusal != nil {
		return 0, d.refusal
	}
	return n, nil
}

// finish parses a last line without its newline and checks that the export line came.
func (d *datasetParser) finish() *Error {
	if len(bytes.TrimSpace(d.partial)) > 0 {
		d.line(d.partial)
	}
	switch {
	case d.refusal != nil:
		return d.refusal
	case !d.sawEnd:
		return Refuse(ReasonInvalidBody, "the dataset has no export line: it is incomplete, or its last line was removed")
	}
	for _, c := range d.src.claims {
		c.realm = d.src.realm
		c.sortStances()
	}
	return nil
}

// line parses one line of the dataset.
func (d *datasetParser) line(line []byte) {
	d.lineNo++
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	src, n := d.src, d.lineNo
	var head datasetImportLine
	if err := json.Unmarshal(line, &head); err != nil {
		d.refusal = Refuse(ReasonInvalidBody, "line %d of the dataset cannot be read: %v", n, err)
		return
	}
	var err error
	switch head.Type {
	case "thread":
		src.threads[head.ID] = head.Title
	case "claim":
		c := &importClaim{}
		if err = json.Unmarshal(line, c); err == nil {
			d.claims[c.ID] = c
			src.claims = append(src.claims, c)
		}
	case "stance":
		st := &importStance{kind: head.Stance}
		if err = json.Unmarshal(line, st); err == nil {
			c, ok := d.claims[head.Claim]
			if !ok {
				d.refusal = Refuse(ReasonInvalidBody, "line %d: stance %s is on %s, which is not a claim line before it", n, st.ID, head.Claim)
				return
			}
			c.stances = append(c.stances, st)
		}
	case "key":
		var k CustodyKey
		if err = json.Unmarshal(line, &k); err == nil {
			src.keys = append(src.keys, k)
		}
	case "export":
		src.realm, src.realmKey, src.realms, src.proof = head.Realm, head.RealmKey, head.Realms, head.Proof != nil
		d.sawEnd = true
	}
	if err != nil {
		d.refusal = Refuse(ReasonInvalidBody, "line %d of the dataset (a %s) cannot be read: %v", n, head.Type, err)
	}
}
