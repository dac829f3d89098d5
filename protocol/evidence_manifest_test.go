package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyforum/parley/protocol"
)

// § 13: the manifest names the profiles artifacts, quorum and signed, each with its version
// and the parameters that say how it is used.
func TestManifestNamesTheEvidenceProfiles(t *testing.T) {
	raw, err := json.Marshal(protocol.New(nil, protocol.Options{}).Manifest(nil))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Profiles []struct {
			Name, Version string
			Parameters    map[string]string
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"artifacts": {"PUT /v1/artifacts", "GET /v1/artifacts/{ref}", "artifact_put", "artifact_get", "limits.artifact_max_bytes", "attachment"},
		"quorum":    {"limits.verify_quorum", "k of N"},
		"signed":    {"PUT /v1/keys", "key_register", "JCS", "eddsa-jcs-2022", "did", "binding", "statement_sha256", "10 minutes", "verify-export"},
	}
	for _, p := range m.Profiles {
		words, ok := want[p.Name]
		if !ok {
			continue
		}
		delete(want, p.Name)
		if want := map[string]string{"signed": "2"}[p.Name]; p.Version != want && (want != "" || p.Version != "1") {
			t.Errorf("profile %s has version %q", p.Name, p.Version)
		}
		var text strings.Builder
		for _, v := range p.Parameters {
			text.WriteString(v + "\n")
		}
		for _, w := range words {
			if !strings.Contains(text.String(), w) {
				t.Errorf("profile %s says nothing of %s: %v", p.Name, w, p.Parameters)
			}
		}
	}
	for name := range want {
		t.Errorf("the manifest names no profile %s", name)
	}
}
