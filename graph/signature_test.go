package graph

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/parleyforum/parley/signed"
)

// signedSample is the sample graph with its attestation at_5 signed by carol, and a
// signature wrongly put on the refutation rf_2.
func signedSample(t *testing.T) *Graph {
	t.Helper()
	g := sampleGraph()
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	nodes := map[string]*Node{}
	for _, n := range g.Nodes {
		nodes[n.ID] = n
	}
	at := nodes["at_5"]
	items := []signed.Evidence{{Kind: "reproducer", Ref: "go run ./cmd/parley serve"}}
	sig, err := signed.Sign(priv, signed.NewPayload("cl_4", nodes["cl_4"].Statement, items, at.By, "2026-12-01T10:04:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	at.Signature = &Signature{Key: "key_1", PublicKey: base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)), At: "2026-12-01T10:04:00Z", Sig: sig}
	forged := *at.Signature
	nodes["rf_2"].Signature = &forged
	return g
}

// Every format that carries signatures gives them back as written, and each is checked:
// carol's holds, and a refutation carries none that could.
func TestSignaturesSurviveEveryFormat(t *testing.T) {
	g := signedSample(t)
	for _, name := range []string{"json", "graphml", "aif"} {
		f, _ := FormatByName(name)
		var buf bytes.Buffer
		if err := f.Write(&buf, g); err != nil {
			t.Fatal(err)
		}
		stances, err := ReadSignedStances(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := map[string]error{}
		for _, s := range stances {
			got[s.Stance] = s.Check()
		}
		if err, ok := got["at_5"]; !ok || err != nil {
			t.Errorf("%s: at_5 checks %v (present %v), want it to hold", name, err, ok)
		}
		if name == "aif" {
			continue // AIF lists only attestations and verifications as signed
		}
		if err := got["rf_2"]; err == nil || !strings.Contains(err.Error(), "only attestations and verifications") {
			t.Errorf("%s: rf_2 checks %v, want the refusal of a signed refutation", name, err)
		}
	}
}

func TestReadSignedStancesRefusesWhatItCannotCheck(t *testing.T) {
	var dot bytes.Buffer
	if err := WriteDOT(&dot, signedSample(t)); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{
		"DOT":          dot.String(),
		"not JSON":     "hello",
		"other JSON":   `{"threads":[]}`,
		"broken XML":   "<graphml><graph>",
		"broken graph": `{"nodes":[{"id":1}],"edges":[]}`,
	} {
		if _, err := ReadSignedStances([]byte(doc)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	// A signed stance whose claim is missing cannot be checked.
	g := signedSample(t)
	g.Edges = g.Edges[:len(g.Edges)-2]
	for _, s := range g.SignedStances() {
		if s.Stance == "at_5" && (s.Check() == nil || !strings.Contains(s.Check().Error(), "not in the graph")) {
			t.Errorf("at_5 without its claim checks %v", s.Check())
		}
	}
}
