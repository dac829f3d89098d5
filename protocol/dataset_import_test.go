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

		// A claim line whose origin names another claim: bob's stance, signed on alpha's
		// cl_1, is no longer on it, nor on any claim of beta's realm.
		moved := bytes.Replace(data, []byte(`"origin":{"realm":"alpha","claim":"cl_1"`), []byte(`"origin":{"realm":"alpha","claim":"cl_9"`), 1)
		if text, failed := checkDatasetText(t, moved); failed == 0 || !strings.Contains(text, "not of this export's realm beta") {
			t.Errorf("the dataset with another origin (%d fail):\n%s", failed, text)
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

// The import takes the jsonl dataset as it takes the JSON export, over POST /v1/imports (the
// body as it was written) and at the command line: alpha's claim lands in beta with bob's
// proof and binding, and importing it again writes nothing. A dataset changed after its proof
// is refused whole; so is beta's dataset in gamma, which trusts both, because it carries
// vera's unsigned seal, for which only alpha speaks.
func TestImportFromADataset(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		dataset, didA := alphaExportAs(t, db, protocol.FormatJSONL)
		betaDB := storagetest.Open(t, db.Kind())
		if _, err := betaDB.CreateAdmin(ctx, "root", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		beta := protocol.New(betaDB, protocol.Options{Realm: "beta", Limits: generous(), TrustRealms: map[string]string{"alpha": didA}})

		// Changed after its proof (the note of bob's evidence): refused, nothing written.
		tampered := bytes.Replace(dataset, []byte("PASS again"), []byte("FAIL again"), 1)
		if bytes.Equal(tampered, dataset) {
			t.Fatal("the dataset holds no PASS again to change")
		}
		_, err := beta.Import(ctx, human("root"), tampered)
		if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil && !strings.Contains(e.Message, "a proof does not hold") {
			t.Errorf("the tampered dataset is refused with %q", e.Message)
		}
		if n := len(allThreads(t, beta)); n != 0 {
			t.Fatalf("the refused import wrote %d threads", n)
		}

		res, err := beta.Import(ctx, human("root"), dataset)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Created() || len(res.Claims) != 1 || res.Claims[0].Origin.Realm != "alpha" || res.Stances != 2 || res.Keys != 1 {
			t.Fatalf("the import of alpha's dataset answered %+v", res)
		}
		c := mustClaim(t, beta, reader, "read", `{"claim":"`+res.Claims[0].ID+`"}`)
		if c.Origin == nil || c.Origin.Claim != "cl_1" || len(c.Attestations) != 1 || c.Attestations[0].By.Identity != "alpha:bob" || c.Attestations[0].Document == nil {
			t.Fatalf("beta reads alpha's claim as %+v", c)
		}
		again, err := beta.ImportExport(ctx, protocol.OperatorActor(), dataset, 0)
		if err != nil || again.Created() || again.Known != 1 {
			t.Fatalf("the second import answered %+v, %v", again, err)
		}

		var buf bytes.Buffer
		if err := beta.WriteExport(ctx, 0, protocol.FormatJSONL, &buf); err != nil {
			t.Fatal(err)
		}
		key, err := beta.RealmKey(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gamma := protocol.New(storagetest.Open(t, db.Kind()), protocol.Options{Realm: "gamma", Limits: generous(),
			TrustRealms: map[string]string{"alpha": didA, "beta": key.DID()}})
		// Beta speaks for beta's identities only: vera's seal on alpha's claim is unsigned, so
		// beta's dataset cannot vouch for it, and gamma refuses the whole import (the
		// journey with every stance signed is TestImportThreeRealms's).
		_, err = gamma.ImportExport(ctx, protocol.OperatorActor(), buf.Bytes(), 0)
		if e := wantRefused(t, err, protocol.ReasonInvalidBody); e != nil && !strings.Contains(e.Message, "by alpha:vera") {
			t.Errorf("gamma's import of beta's dataset is refused with %q", e.Message)
		}
		if n := len(allThreads(t, gamma)); n != 0 {
			t.Errorf("the refused import wrote %d threads into gamma", n)
		}
	})
}
