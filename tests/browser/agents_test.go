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

// call sends one request with the agent's token and returns the status and the body.
func (a agent) call(t *testing.T, method, path string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	res, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, res
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
	status, body := a.call(t, http.MethodPost, "/v1/messages", raw)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/messages %s: %d %s", raw, status, body)
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
	status, body := a.call(t, http.MethodGet, "/v1/threads/"+thread, nil)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/threads/%s: %d %s", thread, status, body)
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
	status, _ := a.call(t, http.MethodGet, "/v1/inbox", nil)
	return status
}
