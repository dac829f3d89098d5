package security

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The security matrix (issue 10, deliverable 5): every operation × every kind of caller ×
// every thread state, each cell's outcome taken from the rules of rules_test.go (PROTOCOL.md
// § 1–§ 13 written down again) and checked over HTTP and MCP alike, on both databases. A
// refusal must carry § 9's status, must leave its thread as it was, and must reveal no token,
// no token hash and no SQL; an accepted write must lead to the state the rules name.
func TestSecurityMatrix(t *testing.T) {
	onThread, standalone := operations()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel() // the two databases side by side: each has its own server
		s := newServer(t, db, relaxedLimits())
		c := newCast(s)
		leaks := newLeakScanner(t, s)
		checkEveryToolIsCovered(t, s, append(append([]operation{}, onThread...), standalone...))
		if _, err := asMap(s.svc.PutArtifactInput)(context.Background(), c.agent,
			[]byte(`{"content_base64":"`+standalone[4].input(fixture{}, "")["content_base64"].(string)+`"}`)); err != nil {
			t.Fatal(err)
		}

		var calls atomic.Int64
		m := &matrix{s: s, c: c, leaks: leaks, calls: &calls}
		t.Run("without a thread", func(t *testing.T) {
			t.Parallel()
			for _, op := range standalone {
				for _, who := range callers {
					want, _ := expect(op, who, threadState{})
					m.cell(t, op, who, threadState{name: "—"}, fixture{}, want, "")
				}
			}
		})
		for _, st := range threadStates {
			t.Run(st.name, func(t *testing.T) {
				t.Parallel()
				shared := c.prepareWith(t, s, st, true, true)
				var before map[string]any
				if st.exists() {
					before = c.snapshot(t, s, shared)
				}
				for _, op := range onThread {
					for _, who := range callers {
						want, after := expect(op, who, st)
						m.cell(t, op, who, st, shared, want, after)
					}
				}
				if st.exists() {
					if diff := stateDiff(before, c.snapshot(t, s, shared)); diff != "" {
						t.Errorf("the refusals changed the thread (-before +after):\n%s", diff)
					}
				}
			})
		}
		t.Cleanup(func() {
			cells := len(onThread)*len(callers)*len(threadStates) + len(standalone)*len(callers)
			t.Logf("security matrix on %s: %d operations on a thread × %d callers × %d thread states + %d operations without a thread × %d callers = %d cells, %d calls over HTTP and MCP",
				db.Kind(), len(onThread), len(callers), len(threadStates), len(standalone), len(callers), cells, calls.Load())
		})
	})
}

type matrix struct {
	s     *server
	c     *cast
	leaks *leakScanner
	calls *atomic.Int64
}

// cell calls op as who over every transport that serves it and checks the answer. An
// operation expected to change the thread gets a fresh thread in the state for each call;
// all others share the state's thread.
func (m *matrix) cell(t *testing.T, op operation, who caller, st threadState, shared fixture, want, after string) {
	t.Helper()
	transports := []string{"HTTP"}
	if op.tool != "" {
		transports = append(transports, "MCP")
	}
	for _, transport := range transports {
		f := shared
		if want == "ok" && op.writes {
			f = m.c.prepareWith(t, m.s, st, subjectOf(op) == "claim", op.message == "hidden")
		}
		input := op.input(f, m.c.extension[who.name])
		got := m.s.call(op, transport, m.c.authorization[who.name], input)
		m.calls.Add(1)
		where := fmt.Sprintf("%s by %s on %s over %s", op.name, who.name, st.name, transport)
		switch {
		case got.outcome != want:
			t.Errorf("%s: %s, want %s", where, got, want)
			continue
		case want != "ok" && got.status != reasonStatus[want]:
			t.Errorf("%s: status %d, want %d for %s", where, got.status, reasonStatus[want], want)
		case want == "ok" && (got.status < 200 || got.status > 299):
			t.Errorf("%s: status %d for an accepted call", where, got.status)
		}
		if want != "ok" {
			m.leaks.check(t, where, got.raw)
		}
		if who.elsewhere {
			m.sameAsNothing(t, where, op, transport, who, f, input, got)
		}
		if want == "ok" && after != "" {
			if state := stateAfter(op, got.result); state != after {
				t.Errorf("%s: the %s is %q after it, want %q: %s", where, subjectOf(op), state, after, clip(string(got.raw), 400))
			}
		}
	}
}

// sameAsNothing is § 16's "exactly as if it did not exist": what a token scoped to another
// room is answered about a thread, its messages and claims is, byte for byte, what it is
// answered about ids that name nothing; and the lists it reads hold no thread of the rooms it
// does not reach.
func (m *matrix) sameAsNothing(t *testing.T, where string, op operation, transport string, who caller, f fixture, input map[string]any, got answer) {
	t.Helper()
	if !op.onThread {
		if transport == "HTTP" && op.name != "feed" && threadKey.Match(got.raw) {
			t.Errorf("%s: a token scoped to another room reads threads: %s", where, clip(string(got.raw), 300))
		}
		return
	}
	if f.thread == unknown.thread {
		return
	}
	nothing := m.s.call(op, transport, m.c.authorization[who.name], op.input(unknown, m.c.extension[who.name]))
	raw := string(got.raw)
	for _, pair := range [][2]string{{f.thread, unknown.thread}, {f.root, unknown.root}, {f.claim, unknown.claim}, {f.hidden, unknown.hidden}} {
		if pair[0] != "" { // the whole id: msg_12 is no part of msg_120
			raw = regexp.MustCompile(`\b`+regexp.QuoteMeta(pair[0])+`\b`).ReplaceAllLiteralString(raw, pair[1])
		}
	}
	if raw != string(nothing.raw) || got.status != nothing.status {
		t.Errorf("%s: another room's thread answers %d %s, a thread that does not exist %d %s", where, got.status, clip(raw, 300), nothing.status, clip(string(nothing.raw), 300))
	}
}

// threadKey is a thread's id in an answer.
var threadKey = regexp.MustCompile(`"th_[0-9]`)

func subjectOf(op operation) string {
	switch {
	case strings.HasPrefix(op.name, "claim"):
		return "claim"
	case op.moderation != "":
		return "message"
	}
	return "thread"
}

// stateAfter is the state of the operation's subject in its result; for a message, "hidden"
// or "visible" (§ 18).
func stateAfter(op operation, result map[string]any) string {
	if subjectOf(op) == "message" {
		message, _ := result["message"].(map[string]any)
		if message == nil {
			return ""
		}
		if message["hidden"] != nil {
			return "hidden"
		}
		return "visible"
	}
	return at(result, subjectOf(op), "state")
}

// call sends op's input as authorization over transport.
func (s *server) call(op operation, transport, authorization string, input map[string]any) answer {
	s.t.Helper()
	if transport == "MCP" {
		args, err := json.Marshal(input)
		if err != nil {
			s.t.Fatal(err)
		}
		return s.callTool(authorization, op.tool, args)
	}
	if op.name == "feed" {
		return s.openFeed(authorization)
	}
	target, contentType, body := op.httpRequest(input)
	resp, raw := s.send(op.method, target, authorization, contentType, body)
	return overHTTP(resp, raw)
}

// openFeed opens GET /v1/feed and, when it streams, leaves at once: an accepted feed is a
// 200 text/event-stream.
func (s *server) openFeed(authorization string) answer {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/v1/feed", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatalf("GET /v1/feed: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			return answer{outcome: "a feed of " + ct, status: resp.StatusCode}
		}
		return answer{outcome: "ok", status: resp.StatusCode}
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("GET /v1/feed: %v", err)
	}
	return overHTTP(resp, raw)
}

// checkEveryToolIsCovered compares the tools the server lists with the operations of the
// matrix: a new tool must get its row.
func checkEveryToolIsCovered(t *testing.T, s *server, ops []operation) {
	t.Helper()
	resp, raw := s.send(http.MethodPost, "/mcp", "", "application/json", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, raw)
	}
	covered := map[string]bool{}
	for _, op := range ops {
		covered[op.tool] = true
	}
	var missing []string
	for _, tool := range list.Result.Tools {
		if !covered[tool.Name] {
			missing = append(missing, tool.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("tools without a row in the matrix: %v", missing)
	}
}
