package browser

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// buildLog is a text artifact whose first line a page must show as text, never run.
const buildLog = "<script>document.title = 'ran'</script>\n=== RUN TestServe\n--- PASS: TestServe (0.02s)\nlistening on 127.0.0.1:8080\n"

// putArtifact stores content as the agent with its media type and returns its ref.
func (a agent) putArtifact(t *testing.T, mediaType, content string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, a.base+"/v1/artifacts", strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", mediaType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Ref string `json:"ref"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); resp.StatusCode != http.StatusCreated || err != nil {
		t.Fatalf("PUT /v1/artifacts: %d %v", resp.StatusCode, err)
	}
	return res.Ref
}

// registerKey registers an Ed25519 key for the agent and returns the key's id and the
// agent's identity, which a signature names.
func (a agent) registerKey(t *testing.T, priv ed25519.PrivateKey) (key, identity string) {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"public_key": base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))})
	status, body := a.call(t, http.MethodPut, "/v1/keys", raw)
	var res struct {
		Key struct {
			ID       string `json:"id"`
			Identity string `json:"identity"`
		} `json:"key"`
	}
	if err := json.Unmarshal(body, &res); (status != http.StatusCreated && status != http.StatusOK) || err != nil {
		t.Fatalf("PUT /v1/keys: %d %s", status, body)
	}
	return res.Key.ID, res.Key.Identity
}

// artifactClaim is a claim of alice's anchored in message that cites buildLog as a stored
// artifact, which bob attests, his attestation carrying a version 1 signature: a card with a
// text artifact and a signed mark. No operation takes a version 1 signature any more, so it
// is written into the stance's row as a forum before version 2 of the signed profile stored
// it. It returns the claim and bob's key.
func (f *forum) artifactClaim(t *testing.T, thread, message string) (claim, key string) {
	t.Helper()
	const statement = "parley serve listens on 127.0.0.1:8080"
	ref := f.alice.putArtifact(t, "text/plain", buildLog)
	claim = f.alice.claim(t, "/v1/claims", map[string]any{"thread": thread, "parent": message, "statement": statement,
		"evidence": []map[string]any{{"kind": "artifact", "ref": ref, "note": "the test run's log"}}})
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{42}, ed25519.SeedSize))
	key, _ = f.bob.registerKey(t, priv)
	raw, _ := json.Marshal(map[string]any{"evidence": []map[string]string{{"kind": "artifact", "ref": ref}}})
	status, body := f.bob.call(t, http.MethodPost, "/v1/claims/"+claim+"/attest", raw)
	var res struct {
		Claim struct {
			Attestations []struct {
				ID string `json:"id"`
			} `json:"attestations"`
		} `json:"claim"`
	}
	if err := json.Unmarshal(body, &res); status != http.StatusOK || err != nil || len(res.Claim.Attestations) == 0 {
		t.Fatalf("bob's attestation: %d %s", status, body)
	}
	db, err := storage.Open(context.Background(), f.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storagetest.SignLegacy(t, db, res.Claim.Attestations[0].ID, key, priv, time.Now())
	return claim, key
}
