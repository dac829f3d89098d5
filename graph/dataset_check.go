package graph

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/parleyforum/parley/signed"
)

// Checking a dataset (PROTOCOL.md § 15, JSON Lines) offline, as it is read: the lines in
// their fixed order (room, thread, message, event, claim, stance, key; each kind by id), the
// export line last, whose counts are the lines' and whose sha256 covers every byte before
// it, its proof by the realm key it names, each key's binding, each stance's document (by a
// key bound to its author, saying what its line says, on its claim's statement) and each
// version 1 signature. Memory holds the claims' statements and the keys, never the lines.

// datasetOrder is the order of the line types; export comes last.
var datasetOrder = []string{"room", "thread", "message", "event", "claim", "stance", "key", "export"}

// LooksLikeDataset reports whether the first line of data is a dataset's line.
func LooksLikeDataset(first []byte) bool {
	var head struct {
		Type string `json:"type"`
	}
	if bytes.IndexByte(bytes.TrimSpace(first), '\n') >= 0 || json.Unmarshal(first, &head) != nil {
		return false
	}
	for _, t := range datasetOrder {
		if head.Type == t {
			return true
		}
	}
	return false
}

// datasetStance is what the check reads of a stance line.
type datasetStanceLine struct {
	ID     string `json:"id"`
	Claim  string `json:"claim"`
	Stance string `json:"stance"`
	By     struct {
		Identity string `json:"identity"`
	} `json:"by"`
	Evidence        []Evidence      `json:"evidence"`
	Note            *string         `json:"note"`
	Body            *string         `json:"body"`
	Document        json.RawMessage `json:"document"`
	LegacySignature *Signature      `json:"legacy_signature"`
}

// datasetClaimLine is what the check reads of a claim line: the statement the stances are
// signed on, and, for a claim imported from another realm, its origin there (§ 14), whose
// claim id the stances signed in that realm name.
type datasetClaimLine struct {
	Statement string `json:"statement"`
	Origin    *struct {
		Realm string `json:"realm"`
		Claim string `json:"claim"`
	} `json:"origin"`
}

// pendingDocument is a stance document whose proof holds, waiting for the keys' bindings and
// the export line's realm: a document that names its claim by the id it has in this dataset
// must be of the export's realm (realm; empty when it names the claim's origin).
type pendingDocument struct {
	did, by      string
	realm, claim string
	at           int // its line in the report
}

// CheckDataset checks a dataset read from r.
func CheckDataset(r io.Reader) (*CustodyReport, error) {
	rep := &CustodyReport{}
	in := bufio.NewReaderSize(r, 1<<20)
	sum := sha256.New()
	counts := map[string]int{}
	claims := map[string]*datasetClaimLine{} // claim id → its statement and origin
	var keys []custodyKey
	var pending []pendingDocument
	var exportLine []byte
	rank, lastID, lineNo := 0, int64(0), 0
	var orderErr error
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		lineNo++
		if exportLine != nil {
			if len(bytes.TrimSpace(line)) > 0 && orderErr == nil {
				orderErr = fmt.Errorf("line %d comes after the export line, which must be the last", lineNo)
			}
			continue
		}
		var head struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		if json.Unmarshal(line, &head) != nil {
			return nil, fmt.Errorf("line %d is not a JSON object", lineNo)
		}
		at := indexOf(head.Type)
		if at < 0 {
			return nil, fmt.Errorf("line %d has the unknown type %q", lineNo, head.Type)
		}
		if head.Type == "export" {
			exportLine = bytes.TrimRight(line, "\n")
			continue
		}
		sum.Write(line)
		counts[head.Type]++
		id := idNumber(head.ID)
		switch {
		case orderErr != nil:
		case at < rank:
			orderErr = fmt.Errorf("line %d is a %s after the %s lines: the order is %s", lineNo, head.Type, datasetOrder[rank], strings.Join(datasetOrder, ", "))
		case at == rank && id <= lastID:
			orderErr = fmt.Errorf("line %d: %s %s does not come after %d: each kind is in order of id", lineNo, head.Type, head.ID, lastID)
		}
		rank, lastID = at, id
		switch head.Type {
		case "claim":
			var c datasetClaimLine
			_ = json.Unmarshal(line, &c)
			claims[head.ID] = &c
		case "stance":
			var st datasetStanceLine
			if err := json.Unmarshal(line, &st); err != nil {
				return nil, fmt.Errorf("line %d: the stance cannot be read: %v", lineNo, err)
			}
			if p := rep.checkStanceLine(&st, claims); p != nil {
				pending = append(pending, *p)
			}
		case "key":
			var k custodyKey
			if err := json.Unmarshal(line, &k); err != nil {
				return nil, fmt.Errorf("line %d: the key cannot be read: %v", lineNo, err)
			}
			keys = append(keys, k)
		}
	}
	rep.add(fmt.Sprintf("order of the %d lines", lineNo), orderErr)
	if exportLine == nil {
		rep.add("export line", errors.New("the dataset has no export line: it is incomplete, or its last line was removed"))
		return rep, nil
	}
	var end struct {
		Realm    string            `json:"realm"`
		RealmKey string            `json:"realm_key"`
		Realms   map[string]string `json:"realms"`
		Counts   map[string]int    `json:"counts"`
		SHA256   string            `json:"sha256"`
	}
	if err := json.Unmarshal(exportLine, &end); err != nil {
		return nil, fmt.Errorf("the export line cannot be read: %v", err)
	}
	checked, err := signed.Verify(exportLine)
	rep.Realm, rep.RealmKey = end.Realm, end.RealmKey
	signer := ""
	if err == nil {
		signer, rep.Signer = checked[0].DID, checked[0].DID
		if signer != end.RealmKey {
			err = fmt.Errorf("made by %s, not by the realm key %s the export names", signer, end.RealmKey)
		}
	}
	rep.addExportProof(fmt.Sprintf("export proof of realm %s by %s", end.Realm, end.RealmKey), err, signer, end.Realm)
	if got := hex.EncodeToString(sum.Sum(nil)); got != end.SHA256 {
		rep.add("sha256 of the lines before the export line", fmt.Errorf("they hash to %s, the export line says %s: a line was changed, added or removed", got, end.SHA256))
	} else {
		rep.add("sha256 of the lines before the export line", nil)
	}
	rep.add("counts of the lines", checkCounts(counts, end.Counts))
	bound := rep.checkBindings(&custody{Realm: end.Realm, RealmKey: end.RealmKey, Keys: keys, Realms: end.Realms})
	for _, p := range pending {
		var err error
		if p.realm != "" && p.realm != end.Realm {
			err = fmt.Errorf("the signed stance is on %s of realm %s, not of this export's realm %s", p.claim, p.realm, end.Realm)
		} else if holder, ok := bound[p.did]; !ok {
			err = fmt.Errorf("its key %s has no binding in the export that holds", p.did)
		} else if holder != p.by {
			err = fmt.Errorf("its key %s is bound to %s, not to its author %s", p.did, holder, p.by)
		}
		rep.Lines[p.at].Err = err
	}
	return rep, nil
}

// checkStanceLine checks a stance line's legacy signature, or its document's proof and that
// the document says what the line says; a document whose proof holds waits for the bindings.
func (r *CustodyReport) checkStanceLine(st *datasetStanceLine, claims map[string]*datasetClaimLine) *pendingDocument {
	var statement string
	claim, known := claims[st.Claim]
	if known {
		statement = claim.Statement
	}
	evidence := st.Evidence
	if evidence == nil {
		evidence = []Evidence{}
	}
	if st.LegacySignature != nil {
		s := &SignedStance{Stance: st.ID, Claim: st.Claim, Statement: statement, By: st.By.Identity, Evidence: evidence, Signature: *st.LegacySignature}
		if !known {
			s.fault = fmt.Errorf("its claim %s is not a claim line before it", st.Claim)
		}
		r.add(fmt.Sprintf("legacy_signature of %s by %s on %s, %s", st.ID, st.By.Identity, st.Claim, st.LegacySignature.Key), s.Check())
	}
	if st.Document == nil {
		if st.LegacySignature == nil {
			r.Unsigned++
		}
		return nil
	}
	var d stanceDocument
	_ = json.Unmarshal(st.Document, &d)
	var digest struct {
		StatementSHA256 string `json:"statement_sha256"`
		// Origin: a stance signed in a realm that had imported its claim names the claim by
		// its origin too (PROTOCOL.md § 14).
		Origin *struct {
			Realm string `json:"realm"`
			Claim string `json:"claim"`
		} `json:"origin"`
	}
	_ = json.Unmarshal(st.Document, &digest)
	what := fmt.Sprintf("stance %s: %s by %s on %s", st.ID, d.Stance, d.By, d.Claim)
	checked, err := signed.Verify(st.Document)
	// A stance signed where its claim came from names the claim by its id there, and one signed
	// in a realm that had imported the claim names it by its origin; any other names it by its
	// id here, in this export's realm (checked at the export line).
	fromOrigin := known && claim.Origin != nil && ((d.Realm == claim.Origin.Realm && d.Claim == claim.Origin.Claim) ||
		(digest.Origin != nil && digest.Origin.Realm == claim.Origin.Realm && digest.Origin.Claim == claim.Origin.Claim))
	if err == nil {
		sum := sha256.Sum256([]byte(statement))
		text := st.Note
		if st.Body != nil {
			text = st.Body
		}
		node := &Node{ID: st.ID, Type: nodeTypeOf(st.Stance), By: st.By.Identity, Evidence: evidence}
		if text != nil {
			node.Text = *text
		}
		switch {
		case d.Type != "ParleyStance":
			err = errors.New("the document is not a ParleyStance")
		case !known || (!fromOrigin && d.Claim != st.Claim):
			err = fmt.Errorf("the signed stance is on %s, the line's claim is %s", d.Claim, st.Claim)
		case digest.StatementSHA256 != hex.EncodeToString(sum[:]):
			err = fmt.Errorf("the signed statement is not the statement of %s: it was edited", st.Claim)
		default:
			err = matchesDocument(node, &d)
		}
	}
	r.add(what, err)
	if err != nil {
		return nil
	}
	p := &pendingDocument{did: checked[0].DID, by: d.By, claim: d.Claim, at: len(r.Lines) - 1}
	if !fromOrigin {
		p.realm = d.Realm
	}
	return p
}

// nodeTypeOf is the graph's node type of a stance kind.
func nodeTypeOf(kind string) string {
	for typ, k := range stanceKinds {
		if k == kind {
			return typ
		}
	}
	return kind
}

// checkCounts compares the lines counted with the counts the export line gives.
func checkCounts(got, said map[string]int) error {
	var wrong []string
	for _, t := range datasetOrder[:len(datasetOrder)-1] {
		n, ok := said[t]
		if !ok || n != got[t] {
			wrong = append(wrong, fmt.Sprintf("%s: %d lines, the export line says %d", t, got[t], n))
		}
	}
	if len(said) != len(datasetOrder)-1 {
		wrong = append(wrong, fmt.Sprintf("the export line counts %d types, not %d", len(said), len(datasetOrder)-1))
	}
	if len(wrong) > 0 {
		return errors.New(strings.Join(wrong, "; "))
	}
	return nil
}

func indexOf(typ string) int {
	for i, t := range datasetOrder {
		if t == typ {
			return i
		}
	}
	return -1
}

// idNumber is the number of an id such as msg_12 (0 when it has none).
func idNumber(id string) int64 {
	n, _ := strconv.ParseInt(id[strings.LastIndexByte(id, '_')+1:], 10, 64)
	return n
}
