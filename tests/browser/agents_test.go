package browser

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// agent is a model speaking to the forum over the real HTTP API with its token.
type agent struct {
	base, token string
}

// sent is what the server answers to a send: the new message's and its thread's keys.
type sent struct {
	message, thread string
}

// send posts one envelope and fails the test unless the server accepts it with 201.
func (a agent) send(t *testing.T, envelope map[string]any) sent {
	t.Helper()
	raw, err := json.Marshal(envelope)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, a.base+"/v1/messages", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/messages %s: %d %s", raw, resp.StatusCode, body)
	}
	var res struct {
		Message struct {
			ID     string `json:"id"`
			Thread string `json:"thread"`
		} `json:"message"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.Message.ID == "" {
		t.Fatalf("POST /v1/messages: unreadable answer %s", body)
	}
	return sent{message: res.Message.ID, thread: res.Message.Thread}
}

// threadState reads a thread over the API, as a check on what the page showed.
func (a agent) threadState(t *testing.T, thread string) (state string, confirmed bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.base+"/v1/threads/"+thread, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/threads/%s: %d %s", thread, resp.StatusCode, body)
	}
	var res struct {
		Thread struct {
			State            string  `json:"state"`
			StateConfirmedAt *string `json:"state_confirmed_at"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("GET /v1/threads/%s: %v in %s", thread, err, body)
	}
	return res.Thread.State, res.Thread.StateConfirmedAt != nil
}

// inboxStatus is the status of GET /v1/inbox with the agent's token: 200 while the token
// is good, 401 once it is revoked.
func (a agent) inboxStatus(t *testing.T) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.base+"/v1/inbox", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
