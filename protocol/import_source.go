package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/signed"
)

// Reading what an import brings (§ 14): another realm's export, read into the one form the
// import writes from — its custody (realm, realm key, the other realms it names, the keys with
// their bindings) and its claims with their stances. Each export format that carries claims
// has its reader: the JSON export here, the JSON Lines dataset of § 15 in import_dataset.go;
// the checks and the writing do not depend on the format.

// importSource is an export as the import reads it.
type importSource struct {
	// data is the JSON export exactly as given, for graph.CheckCustody; a dataset's custody
	// was checked as it was read (report).
	data     []byte
	dataset  bool
	report   *graph.CustodyReport
	realm    string
	realmKey string
	// realms are the other realms the export names, with their keys (bindings of imported
	// keys are by them).
	realms  map[string]string
	keys    []CustodyKey
	proof   bool
	threads map[string]string // source thread id → title
	claims  []*importClaim
}

// importClaim is one claim of the export, as it came: what it says is taken apart by this
// forum's rules (importRules) into content and prov before anything is written.
type importClaim struct {
	ID         string          `json:"id"`
	Thread     string          `json:"thread"`
	Statement  string          `json:"statement"`
	By         Party           `json:"asserted_by"`
	Evidence   json.RawMessage `json:"evidence"`
	Provenance json.RawMessage `json:"provenance"`
	ValidUntil *time.Time      `json:"valid_until"`
	Origin     *ClaimOrigin    `json:"origin"`
	At         time.Time       `json:"created_at"`
	stances    []*importStance
	realm      string // the export's
	content    *claimContent
	prov       Provenance
}

// importStance is one stance of an exported claim, as it came; content and prov as the
// claim's.
type importStance struct {
	ID         string          `json:"id"`
	By         Party           `json:"by"`
	Evidence   json.RawMessage `json:"evidence"`
	Note       *string         `json:"note"`
	Body       *string         `json:"body"`
	Provenance json.RawMessage `json:"provenance"`
	At         time.Time       `json:"at"`
	Document   json.RawMessage `json:"document"`
	kind       string
	content    *stanceInput
	prov       Provenance
}

// originRealm is the realm the claim was made in: its origin's, or the export's own.
func (c *importClaim) originRealm() string {
	if c.Origin != nil {
		return c.Origin.Realm
	}
	return c.realm
}

// readImportSource reads data as an export whose claims can be imported.
func readImportSource(data []byte) (*importSource, *Error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("<")) || bytes.HasPrefix(trimmed, []byte("digraph")) {
		return nil, Refuse(ReasonInvalidBody, "the import takes the JSON export or the jsonl dataset (parley export --format json or jsonl), not GraphML or DOT")
	}
	if isDataset(data) {
		return readDataset(data)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return nil, Refuse(ReasonInvalidBody, "the import is not a JSON export nor a jsonl dataset (parley export --format json or jsonl): %v", err)
	}
	if _, aif := top["locutions"]; aif {
		return nil, Refuse(ReasonInvalidBody, "the import takes the JSON export or the jsonl dataset (parley export --format json or jsonl); an AIF export carries no claims to import")
	}
	if _, ok := top["claims"]; !ok {
		return nil, Refuse(ReasonInvalidBody, "the import is not a Parley JSON export: it has no claims")
	}
	return readJSONExport(data, top)
}

// readJSONExport reads the JSON export of parley export.
func readJSONExport(data []byte, top map[string]json.RawMessage) (*importSource, *Error) {
	var head struct {
		Realm    string            `json:"realm"`
		RealmKey string            `json:"realm_key"`
		Realms   map[string]string `json:"realms"`
		Keys     []CustodyKey      `json:"keys"`
		Threads  []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"threads"`
		Claims []struct {
			importClaim
			Attestations  []*importStance `json:"attestations"`
			Refutations   []*importStance `json:"refutations"`
			Verifications []*importStance `json:"verifications"`
		} `json:"claims"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, Refuse(ReasonInvalidBody, "the JSON export cannot be read: %v", err)
	}
	_, hasProof := top["proof"]
	src := &importSource{data: data, realm: head.Realm, realmKey: head.RealmKey, realms: head.Realms,
		keys: head.Keys, proof: hasProof, threads: map[string]string{}}
	for _, t := range head.Threads {
		src.threads[t.ID] = t.Title
	}
	for i := range head.Claims {
		c := head.Claims[i]
		claim := c.importClaim
		claim.realm = head.Realm
		for kind, list := range map[string][]*importStance{"attest": c.Attestations, "refute": c.Refutations, "verify": c.Verifications} {
			for _, st := range list {
				st.kind = kind
				claim.stances = append(claim.stances, st)
			}
		}
		claim.sortStances()
		src.claims = append(src.claims, &claim)
	}
	return src, nil
}

// sortStances puts the claim's stances in the order they were taken: the state is
// recomputed by replaying them.
func (c *importClaim) sortStances() {
	sort.SliceStable(c.stances, func(a, b int) bool {
		if !c.stances[a].At.Equal(c.stances[b].At) {
			return c.stances[a].At.Before(c.stances[b].At)
		}
		return stanceNumber(c.stances[a].ID) < stanceNumber(c.stances[b].ID)
	})
}

// stanceNumber is the number of a stance id (att_7 → 7), 0 when it has none.
func stanceNumber(id string) int64 {
	for _, prefix := range []string{"att_", "ref_", "ver_"} {
		if n, ok := ParseIDString(id, prefix); ok {
			return n
		}
	}
	return 0
}

// stanceProof is what a stance's document says, to compare with the stance the export shows.
type stanceProof struct {
	Type            string     `json:"type"`
	Stance          string     `json:"stance"`
	Realm           string     `json:"realm"`
	Claim           string     `json:"claim"`
	StatementSHA256 string     `json:"statement_sha256"`
	By              string     `json:"by"`
	Evidence        []Evidence `json:"evidence"`
	Note            *string    `json:"note"`
	Body            *string    `json:"body"`
	// Origin names an imported claim where it was made (OnImportedClaim).
	Origin *struct {
		Realm string `json:"realm"`
		Claim string `json:"claim"`
	} `json:"origin"`
}

// checkDocument checks a signed stance's document against the stance and its claim: the proof
// holds, its key is bound to the stance's author, and it says what the export shows — the
// kind, the author, the claim, the claim's statement, the evidence, the note or body. It
// answers the key's did and the document.
func (c *importClaim) checkDocument(st *importStance, bound map[string]string) (string, *stanceProof, error) {
	checked, err := signed.Verify(st.Document)
	if err != nil {
		return "", nil, err
	}
	var d stanceProof
	if err := json.Unmarshal(st.Document, &d); err != nil {
		return "", nil, fmt.Errorf("the document cannot be read: %v", err)
	}
	did := checked[0].DID
	same := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	switch {
	case d.Type != "ParleyStance":
		return "", nil, fmt.Errorf("the document is not a ParleyStance")
	case bound[did] == "":
		return "", nil, fmt.Errorf("its key %s has no binding in the export that holds", did)
	case bound[did] != d.By:
		return "", nil, fmt.Errorf("its key %s is bound to %s, not to its author %s", did, bound[did], d.By)
	case d.Stance != st.kind:
		return "", nil, fmt.Errorf("the export shows it as %s, but the signed stance is %s", st.kind, d.Stance)
	case d.By != st.By.Identity:
		return "", nil, fmt.Errorf("the export names %s as its author, the signed stance %s", st.By.Identity, d.By)
	case !c.namedBy(&d):
		return "", nil, fmt.Errorf("the signed stance is on %s of realm %s, not on this claim", d.Claim, d.Realm)
	case d.StatementSHA256 != signed.StatementSHA256(c.Statement):
		return "", nil, fmt.Errorf("the signed stance is on another statement than claim %s's", c.ID)
	case !same(d.Note, st.content.note) || !same(d.Body, st.content.body):
		return "", nil, fmt.Errorf("the export's note or body is not the signed one")
	case evidenceJSON(d.Evidence) != evidenceJSON(st.content.evidence):
		return "", nil, fmt.Errorf("the export's evidence is not the signed evidence")
	}
	return did, &d, nil
}

// namedBy reports whether a signed stance's document names this claim (§ 14): by its id in
// the realm the stance was signed in — the exporting realm's, or the claim's own realm's —
// or, signed in a realm that had imported the claim, by its origin. A document that names an
// origin names this claim's.
func (c *importClaim) namedBy(d *stanceProof) bool {
	if d.Origin != nil && (c.Origin == nil || d.Origin.Realm != c.Origin.Realm || d.Origin.Claim != c.Origin.Claim) {
		return false
	}
	switch {
	case d.Realm == c.realm:
		return d.Claim == c.ID
	case c.Origin != nil && d.Realm == c.Origin.Realm:
		return d.Claim == c.Origin.Claim
	default:
		return d.Origin != nil
	}
}

// evidenceJSON is evidence as signed: what this store marks of it (present) is no part of it.
func evidenceJSON(items []Evidence) string {
	out := make([]Evidence, len(items))
	for i, e := range items {
		out[i] = Evidence{Kind: e.Kind, Ref: e.Ref, Note: e.Note}
	}
	raw, _ := json.Marshal(out)
	return string(raw)
}

// custodyHolds checks every proof of the export offline as parley verify-export does, and
// answers the first that fails.
func (src *importSource) custodyHolds() error {
	report := src.report
	if report == nil {
		var err error
		if report, err = graph.CheckCustody(src.data); err != nil {
			return err
		}
	}
	for _, l := range report.Lines {
		if l.Err != nil {
			return fmt.Errorf("%s: %v", l.What, l.Err)
		}
	}
	return nil
}
