package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// betaWithAlphasClaim is realm beta, trusting alpha, holding alpha's claim (attested by bob
// with a signed stance) by an import of alpha's JSON export.
func betaWithAlphasClaim(t *testing.T, db *storage.DB) (beta *protocol.Service, betaDB *storage.DB, didA string) {
	t.Helper()
	export, didA := alphaExport(t, db)
	betaDB = storagetest.Open(t, db.Kind())
	beta = protocol.New(betaDB, protocol.Options{Realm: "beta", Limits: generous(), TrustRealms: map[string]string{"alpha": didA}})
	if _, err := beta.ImportExport(context.Background(), protocol.OperatorActor(), export, 0); err != nil {
		t.Fatal(err)
	}
	return beta, betaDB, didA
}

// checkDatasetText checks a dataset offline and answers its report as text, and how many
// lines fail.
func checkDatasetText(t *testing.T, data []byte) (string, int) {
	t.Helper()
	r, err := graph.CheckDataset(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, l := range r.Lines {
		all = append(all, l.What+": "+errText(l.Err))
	}
	return strings.Join(all, "\n"), r.Failed()
}

// A dataset of a forum holding imported stances carries their custody as the JSON export
// does: origin on the claim line, the realms on the export line; every line validates
// against its schema, and the offline check holds, bob's binding checked against alpha's key.
// Without the realms, the binding cannot be checked.
func TestDatasetCarriesImportedCustody(t *testing.T) {
	schemas := datasetSchemas(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		beta, betaDB, didA := betaWithAlphasClaim(t, db)
		var buf bytes.Buffer
		if err := beta.WriteExport(ctx, 0, protocol.FormatJSONL, &buf); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		raw := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		for _, line := range raw {
			if err := validateLine(schemas, line); err != nil {
				t.Errorf("%s\n%v", line, err)
			}
		}
		lines := datasetLines(t, data)
		end := lines[len(lines)-1]
		if realms, _ := end["realms"].(map[string]any); len(realms) != 1 || realms["alpha"] != didA {
			t.Errorf("the export line names the realms %v, want alpha=%s", end["realms"], didA)
		}
		origins := 0
		for _, l := range lines {
			if o, ok := l["origin"].(map[string]any); ok && l["type"] == "claim" && o["realm"] == "alpha" && o["claim"] == "cl_1" {
				origins++
			}
		}
		if origins != 1 {
			t.Errorf("%d claim lines carry alpha's origin, want 1", origins)
		}
		text, failed := checkDatasetText(t, data)
		if failed != 0 || !strings.Contains(text, "attest by alpha:bob on cl_1") || !strings.Contains(text, "to alpha:bob: ok") {
			t.Errorf("the check of beta's dataset (%d fail):\n%s", failed, text)
		}

		// The export line without its realms, signed again by beta's own realm key.
		realmKey, err := protocol.LoadRealmKey(ctx, betaDB)
		if err != nil {
			t.Fatal(err)
		}
		var last map[string]any
		_ = json.Unmarshal(raw[len(raw)-1], &last)
		delete(last, "proof")
		delete(last, "realms")
		unsigned, _ := json.Marshal(last)
		resigned, err := realmKey.Sign(unsigned, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		stripped := append(bytes.Join(raw[:len(raw)-1], nil), append(resigned, '\n')...)
		if text, failed := checkDatasetText(t, stripped); failed == 0 || !strings.Contains(text, "whose key the export does not list") {
			t.Errorf("the dataset without its realms (%d fail):\n%s", failed, text)
		}
	})
}
