package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// TestExportIsOneSnapshot writes claims in a loop while it exports the forum again and again:
// every export must be one consistent snapshot — each claim of claims[] a node of the graph
// in the same state, with its assert event, and each stance's event there too (§ 15).
func TestExportIsOneSnapshot(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		th := send(t, svc, alice, envelope("ask", "", "Which port?")).Thread.ID
		var done atomic.Bool
		writes := make(chan error, 1)
		go func() {
			defer done.Store(true)
			for i := range 30 {
				res, err := claimOp(svc, alice, "assert", `{"thread":"`+th+`","statement":"port `+fmt.Sprint(i)+`","evidence":`+proof+`}`)
				if err == nil {
					_, err = claimOp(svc, bob, "attest", `{"claim":"`+res.Claim.ID+`","evidence":`+proof+`}`)
				}
				if err != nil {
					writes <- err
					return
				}
			}
			writes <- nil
		}()
		exports := 0
		for !done.Load() || exports < 3 {
			var buf bytes.Buffer
			if err := svc.WriteExport(context.Background(), 0, "json", &buf); err != nil {
				t.Fatal(err)
			}
			var exp snapshotExport
			if err := json.Unmarshal(buf.Bytes(), &exp); err != nil {
				t.Fatal(err)
			}
			checkExportConsistent(t, &exp)
			exports++
		}
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
		t.Logf("%d exports beside 60 writes", exports)
	})
}

// snapshotExport is what the check reads of a JSON export.
type snapshotExport struct {
	Nodes []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	} `json:"nodes"`
	Events []struct {
		Subject string  `json:"subject"`
		Act     string  `json:"act"`
		Stance  *string `json:"stance"`
	} `json:"events"`
	Claims []struct {
		ID           string `json:"id"`
		State        string `json:"state"`
		Attestations []struct {
			ID string `json:"id"`
		} `json:"attestations"`
	} `json:"claims"`
}

func checkExportConsistent(t *testing.T, exp *snapshotExport) {
	t.Helper()
	nodes := map[string]string{}
	for _, n := range exp.Nodes {
		nodes[n.ID] = n.State
	}
	events := map[string]bool{}
	for _, ev := range exp.Events {
		events[ev.Subject+" "+ev.Act] = true
		if ev.Stance != nil {
			events[*ev.Stance] = true
		}
	}
	if claimNodes := len(exp.Claims); claimNodes > 0 {
		for _, c := range exp.Claims {
			state, ok := nodes[c.ID]
			switch {
			case !ok:
				t.Errorf("claim %s is in claims[] but not a node", c.ID)
			case state != c.State:
				t.Errorf("claim %s is %s in claims[] and %s as a node", c.ID, c.State, state)
			}
			if !events[c.ID+" assert"] {
				t.Errorf("claim %s has no assert event", c.ID)
			}
			for _, st := range c.Attestations {
				if _, ok := nodes[st.ID]; !ok || !events[st.ID] {
					t.Errorf("attestation %s: node %v, event %v", st.ID, ok, events[st.ID])
				}
			}
		}
	}
	for id := range nodes {
		if len(id) > 3 && id[:3] == "cl_" {
			found := false
			for _, c := range exp.Claims {
				found = found || c.ID == id
			}
			if !found {
				t.Errorf("node %s is not in claims[]", id)
			}
		}
	}
}

// TestExportedAtIsTheSnapshotsTime exports the forum again and again, as JSON and as the
// dataset, while messages, claims and stances are written beside it: no time a row is stamped
// with may be after the export's exported_at (§ 14), which is the time of its snapshot.
func TestExportedAtIsTheSnapshotsTime(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		svc := newService(t, db)
		alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
		th := send(t, svc, alice, envelope("ask", "", "Which port?")).Thread.ID
		var done atomic.Bool
		writes := make(chan error, 1)
		go func() {
			defer done.Store(true)
			for i := range 30 {
				res, err := claimOp(svc, alice, "assert", `{"thread":"`+th+`","statement":"port `+fmt.Sprint(i)+`","evidence":`+proof+`}`)
				if err == nil {
					_, err = claimOp(svc, bob, "attest", `{"claim":"`+res.Claim.ID+`","evidence":`+proof+`}`)
				}
				if err == nil {
					_, err = svc.Send(context.Background(), bob, []byte(envelope("note", th, "port "+fmt.Sprint(i)+" is open")))
				}
				if err != nil {
					writes <- err
					return
				}
			}
			writes <- nil
		}()
		exports := 0
		for !done.Load() || exports < 4 {
			format := []string{"json", "jsonl"}[exports%2]
			var buf bytes.Buffer
			if err := svc.WriteExport(context.Background(), 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			docs := [][]byte{buf.Bytes()}
			if format == "jsonl" {
				docs = bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
			}
			var exportedAt time.Time
			var stamps []stamp
			for _, doc := range docs {
				var v any
				if err := json.Unmarshal(doc, &v); err != nil {
					t.Fatal(err)
				}
				if m, ok := v.(map[string]any); ok && m["exported_at"] != nil {
					var err error
					if exportedAt, err = time.Parse(time.RFC3339Nano, m["exported_at"].(string)); err != nil {
						t.Fatal(err)
					}
				}
				stamps = collectStamps(t, "", v, stamps)
			}
			if exportedAt.IsZero() {
				t.Fatalf("the %s export has no exported_at", format)
			}
			for _, s := range stamps {
				if s.at.After(exportedAt) {
					t.Errorf("the %s export of %s holds %s, stamped %s after it", format, exportedAt.Format(time.RFC3339Nano), s.where, s.at.Sub(exportedAt))
				}
			}
			exports++
		}
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
		t.Logf("%d exports beside 90 writes", exports)
	})
}

// stamp is a time a row of an export is stamped with, and where.
type stamp struct {
	where string
	at    time.Time
}

// stampNames are the members that stamp a row (not valid_until, which is a claim's future,
// nor a proof's created, which its signer chose).
var stampNames = map[string]bool{"created_at": true, "updated_at": true, "at": true, "confirmed_at": true, "state_confirmed_at": true}

// collectStamps adds every stamp in v (a JSON value at path) to out.
func collectStamps(t *testing.T, path string, v any, out []stamp) []stamp {
	switch v := v.(type) {
	case map[string]any:
		for name, x := range v {
			if s, ok := x.(string); ok && stampNames[name] {
				at, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					t.Fatalf("%s.%s is no time: %q", path, name, s)
				}
				out = append(out, stamp{fmt.Sprintf("%s.%s (%v)", path, name, v["id"]), at})
			}
			out = collectStamps(t, path+"."+name, x, out)
		}
	case []any:
		for _, x := range v {
			out = collectStamps(t, path+"[]", x, out)
		}
	}
	return out
}
