package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

// § 8, § 12: the manifest names the profile dialectic with its version, evidence kinds,
// states, operations and the order of its checks.
func TestManifestNamesTheDialecticProfile(t *testing.T) {
	raw, err := json.Marshal(protocol.New(nil, protocol.Options{}).Manifest(nil))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Profiles []struct {
			Name, Version string
			EvidenceKinds []struct{ Kind, Ref string } `json:"evidence_kinds"`
			ClaimStates   []string                     `json:"claim_states"`
			Operations    []struct{ Operation, Tool string }
			CheckOrder    []string `json:"check_order"`
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Profiles {
		if p.Name != "dialectic" {
			continue
		}
		var kinds, ops []string
		for _, k := range p.EvidenceKinds {
			kinds = append(kinds, k.Kind)
			if k.Ref == "" {
				t.Errorf("evidence kind %s says nothing of its ref", k.Kind)
			}
		}
		for _, o := range p.Operations {
			ops = append(ops, o.Operation)
		}
		checks := map[string]string{
			"version":        p.Version,
			"evidence kinds": strings.Join(kinds, " "),
			"claim states":   strings.Join(p.ClaimStates, " "),
			"operations":     strings.Join(ops, " "),
		}
		want := map[string]string{
			"version":        "1",
			"evidence kinds": "url hash artifact commit log reproducer note other",
			"claim states":   "refuted unverified supported verified superseded",
			"operations":     "assert attest refute verify read mark graph",
		}
		for k := range want {
			if checks[k] != want[k] {
				t.Errorf("dialectic %s: %q, want %q", k, checks[k], want[k])
			}
		}
		order := strings.Join(p.CheckOrder, " ")
		if !strings.Contains(order, "thread_authority_missing self_attestation already_attested invalid_transition") {
			t.Errorf("dialectic check_order %s", order)
		}
		return
	}
	t.Fatalf("the manifest names no profile dialectic: %s", raw)
}
