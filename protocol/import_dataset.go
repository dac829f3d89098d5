package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/parleyforum/parley/graph"
)

// Reading a JSON Lines dataset (§ 15) for an import (§ 14): the thread lines give the
// titles, the claim lines the claims, the stance lines their stances (each names its claim
// and its kind), the key lines the keys with their bindings, and the export line the realm,
// its key, the other realms it names and the proof. What it does not say the import does not
// need; whether it holds is graph.CheckDataset's to say, as for parley verify-export.

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

// readDataset reads a dataset into the form the import writes from.
func readDataset(data []byte) (*importSource, *Error) {
	src := &importSource{data: data, dataset: true, threads: map[string]string{}}
	claims := map[string]*importClaim{}
	sawEnd := false
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var head datasetImportLine
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, Refuse(ReasonInvalidBody, "line %d of the dataset cannot be read: %v", n+1, err)
		}
		var err error
		switch head.Type {
		case "thread":
			src.threads[head.ID] = head.Title
		case "claim":
			c := &importClaim{}
			if err = json.Unmarshal(line, c); err == nil {
				claims[c.ID] = c
				src.claims = append(src.claims, c)
			}
		case "stance":
			st := &importStance{kind: head.Stance}
			if err = json.Unmarshal(line, st); err == nil {
				c, ok := claims[head.Claim]
				if !ok {
					return nil, Refuse(ReasonInvalidBody, "line %d: stance %s is on %s, which is not a claim line before it", n+1, st.ID, head.Claim)
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
			sawEnd = true
		}
		if err != nil {
			return nil, Refuse(ReasonInvalidBody, "line %d of the dataset (a %s) cannot be read: %v", n+1, head.Type, err)
		}
	}
	if !sawEnd {
		return nil, Refuse(ReasonInvalidBody, "the dataset has no export line: it is incomplete, or its last line was removed")
	}
	for _, c := range src.claims {
		c.realm = src.realm
		c.sortStances()
	}
	return src, nil
}
