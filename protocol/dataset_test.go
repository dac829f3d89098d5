package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// datasetSchemas compiles the schema of every line type with a real JSON Schema validator,
// formats asserted (date-time).
func datasetSchemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[string]*jsonschema.Schema{}
	for _, typ := range protocol.DatasetLineTypes {
		raw, ok := protocol.DatasetSchema(typ)
		if !ok {
			t.Fatalf("no schema for %s", typ)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s.json: %v", typ, err)
		}
		url := "https://parley.invalid/v1/schema/" + typ + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if out[typ], err = c.Compile(url); err != nil {
			t.Fatalf("%s.json does not compile: %v", typ, err)
		}
	}
	return out
}

// validateLine validates one line against the schema its type names.
func validateLine(schemas map[string]*jsonschema.Schema, line []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return err
	}
	sch, ok := schemas[head.Type]
	if !ok {
		return fmt.Errorf("no schema for type %q", head.Type)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// Every line of a real export validates against its type's schema (draft 2020-12), every
// type occurs, and lines that break their schema are refused.
func TestDatasetLinesMatchTheirSchemas(t *testing.T) {
	schemas := datasetSchemas(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		data := f.dataset(t, storage.Scope{}, 0)
		seen := map[string]int{}
		for _, line := range bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if err := validateLine(schemas, line); err != nil {
				t.Errorf("%s\n%v", line, err)
			}
			var head struct{ Type string }
			_ = json.Unmarshal(line, &head)
			seen[head.Type]++
		}
		for _, typ := range protocol.DatasetLineTypes {
			if seen[typ] == 0 {
				t.Errorf("the export has no %s line: the fixture must hold one of each", typ)
			}
		}
	})
	for _, line := range schemaGoodLines {
		if err := validateLine(schemas, []byte(line)); err != nil {
			t.Errorf("%s\n%v", line, err)
		}
	}
	for _, b := range schemaBadLines {
		if err := validateLine(schemas, []byte(b.line)); err == nil {
			t.Errorf("%s: valid, want refused", b.name)
		}
	}
}

// The dataset comes in its fixed order, its last line counts the lines, hashes every byte
// before it and is signed by the realm key; the offline check holds on it and fails on each
// tamper.
func TestDatasetOrderCountsAndCustody(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		data := f.dataset(t, storage.Scope{}, 0)
		lines := datasetLines(t, data)
		order := strings.Join(protocol.DatasetLineTypes, " ")
		var types []string
		for _, l := range lines {
			if typ := l["type"].(string); len(types) == 0 || types[len(types)-1] != typ {
				types = append(types, typ)
			}
		}
		if got := strings.Join(types, " "); got != order {
			t.Errorf("the lines come as %s, want %s", got, order)
		}
		last := lines[len(lines)-1]
		counts := last["counts"].(map[string]any)
		if counts["message"] != 3.0+1 || counts["stance"] != 3.0 || counts["key"] != 2.0 || counts["room"] != 3.0 || counts["claim"] != 4.0 {
			t.Errorf("counts %v", counts)
		}
		realmKey, err := f.svc.RealmKey(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if last["realm_key"] != realmKey.DID() || last["realm"] != f.svc.Realm() {
			t.Errorf("the export line names %v of %v, want the realm key %s", last["realm_key"], last["realm"], realmKey.DID())
		}
		if bytes.Contains(data, []byte(f.hiddenBody)) {
			t.Error("the hidden message's body is in the dataset")
		}
		for _, l := range lines {
			switch {
			case l["id"] == f.newer && fmt.Sprint(l["supersedes"]) != "["+f.older+"]":
				t.Errorf("%s supersedes %v, want [%s]", f.newer, l["supersedes"], f.older)
			case l["type"] == "stance" && l["stance"] == "refute" && fmt.Sprint(l["provenance"]) != "map[model:m-2]":
				t.Errorf("the refutation's provenance is %v", l["provenance"])
			}
		}
		check := func(name string, data []byte, wantText string) {
			t.Helper()
			r, err := graph.CheckDataset(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var all []string
			for _, l := range r.Lines {
				all = append(all, l.What+": "+errText(l.Err))
			}
			if text := strings.Join(all, "\n"); (r.Failed() == 0) != (wantText == "") || !strings.Contains(text, wantText) {
				t.Errorf("%s: %d fail, want them to name %q:\n%s", name, r.Failed(), wantText, text)
			}
		}
		check("the dataset", data, "")
		r, _ := graph.CheckDataset(bytes.NewReader(data))
		if r.Unsigned != 1 {
			t.Errorf("%d stances unsigned, want 1 (carol's refutation)", r.Unsigned)
		}
		raw := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
		at := func(typ string) int {
			for i, l := range raw {
				if bytes.HasPrefix(l, []byte(`{"type":"`+typ+`"`)) {
					return i
				}
			}
			t.Fatalf("no %s line", typ)
			return 0
		}
		swapped := append([][]byte{}, raw...)
		swapped[at("thread")], swapped[at("room")] = swapped[at("room")], swapped[at("thread")]
		check("a thread before a room", join(swapped), "the order is")
		check("one byte changed", bytes.Replace(data, []byte("It passes on main."), []byte("It passes on main!"), 1), "a line was changed")
		removed := append(append([][]byte{}, raw[:at("event")]...), raw[at("event")+1:]...)
		check("an event removed", join(removed), "event: 11 lines")
		check("the export line removed", join(raw[:len(raw)-1]), "no export line")
		check("a signed note edited", bytes.Replace(data, []byte(`"note":"`+f.signedNote+`","at"`), []byte(`"note":"ran it once","at"`), 1), "it was edited")
		check("a line after the export line", append(append([]byte{}, data...), raw[0]...), "after the export line")
		var end map[string]any
		_ = json.Unmarshal(raw[len(raw)-1], &end)
		end["counts"].(map[string]any)["message"] = 3
		forged, _ := json.Marshal(end)
		check("the counts rewritten", join(append(append([][]byte{}, raw[:len(raw)-1]...), append(forged, '\n'))), "export proof")
		rebound := bytes.Replace(data, []byte(`"identity":"ainotes:bob","did"`), []byte(`"identity":"ainotes:eve","did"`), 1)
		check("a key bound to another identity", rebound, "binds")
	})
}

// A scoped reader's dataset holds its rooms only, as every other read (§ 16), and one
// thread's dataset that thread only.
func TestDatasetKeepsToTheScope(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		ctx := context.Background()
		researcher := agent("researcher", "read")
		researcher.Rooms = []int64{2}
		stream, err := f.svc.OpenExport(ctx, researcher, "", []byte(`{"format":"jsonl"}`))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := stream.Stream(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		ids := map[string][]string{}
		for _, l := range datasetLines(t, buf.Bytes()) {
			if id, ok := l["id"].(string); ok {
				ids[l["type"].(string)] = append(ids[l["type"].(string)], id)
			}
		}
		want := map[string][]string{"room": {"rm_2", "rm_3"}, "thread": {f.inResearch}, "claim": {f.researchClaim}}
		for typ, w := range want {
			if fmt.Sprint(ids[typ]) != fmt.Sprint(w) {
				t.Errorf("the scoped dataset's %s lines are %v, want %v", typ, ids[typ], w)
			}
		}
		if len(ids["stance"]) != 0 || len(ids["key"]) != 0 || len(ids["message"]) != 1 || len(ids["event"]) != 2 {
			t.Errorf("the scoped dataset holds more than research: %v", ids)
		}
		if r, _ := graph.CheckDataset(&buf); r == nil || r.Failed() != 0 {
			t.Errorf("the scoped dataset does not hold under the check")
		}
		// One thread: that thread, its room, and nothing of the others.
		th, _ := protocol.ParseIDString(f.general, "th_")
		one := datasetLines(t, f.dataset(t, storage.Scope{}, th))
		for _, l := range one {
			if thread, ok := l["thread"]; ok && thread != f.general {
				t.Errorf("the dataset of %s holds %v of %v", f.general, l["id"], thread)
			}
			if l["type"] == "room" && l["id"] != "rm_1" {
				t.Errorf("the dataset of %s holds the room %v", f.general, l["id"])
			}
		}
		// Another room's thread is not found, as if it did not exist.
		if _, err := f.svc.OpenExport(ctx, researcher, "", []byte(`{"format":"jsonl","thread":"`+f.general+`"}`)); err == nil {
			t.Error("a thread outside the token's rooms was exported")
		} else {
			wantRefused(t, err, protocol.ReasonNotFound)
		}
	})
}

// One identity runs at most two exports at once (the gate's share of heavy slots, § 19): a
// third is rate_limited with retry_after, and a slot is free again when a stream ends or is
// closed. The checks of § 9 come first.
func TestExportsPerIdentity(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		ctx := context.Background()
		alice := agent("alice", "read")
		first, err := f.svc.OpenExport(ctx, alice, "", []byte(`{"format":"jsonl"}`))
		if err != nil {
			t.Fatal(err)
		}
		second, err := f.svc.OpenExport(ctx, alice, "", []byte(`{"format":"graphml"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.OpenExport(ctx, alice, "", []byte(`{}`))
		if e := wantRefused(t, err, protocol.ReasonRateLimited); e != nil && e.RetryAfter <= 0 {
			t.Errorf("the refusal has no retry_after: %+v", e)
		}
		if err := first.Stream(ctx, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		// (A SQLite file has two connections for long reads: bob's export takes the one
		// the stream gave back.)
		other, err := f.svc.OpenExport(ctx, agent("bob", "read"), "", []byte(`{"format":"aif"}`))
		if err != nil {
			t.Fatalf("another identity is refused while alice exports: %v", err)
		}
		other.Close()
		third, err := f.svc.OpenExport(ctx, alice, "", []byte(`{"format":"dot"}`))
		if err != nil {
			t.Fatalf("after a stream ended its slot is not free: %v", err)
		}
		second.Close()
		second.Close() // twice gives back one slot only
		third.Close()
		for _, c := range []struct {
			actor  *protocol.Actor
			input  string
			reason protocol.Reason
		}{
			{nil, `{}`, protocol.ReasonUnauthenticated},
			{agent("w", "write"), `{}`, protocol.ReasonTokenRightMissing},
			{alice, `{"format":"csv"}`, protocol.ReasonInvalidBody},
			{alice, `{"thread":"th_999"}`, protocol.ReasonNotFound},
			{alice, `{"room":"nowhere"}`, protocol.ReasonNotFound},
			{alice, `{"limit":3}`, protocol.ReasonInvalidBody},
		} {
			_, err := f.svc.OpenExport(ctx, c.actor, "", []byte(c.input))
			wantRefused(t, err, c.reason)
		}
		for range 2 {
			s, err := f.svc.OpenExport(ctx, alice, "", []byte(`{}`))
			if err != nil {
				t.Fatalf("refusals held slots: %v", err)
			}
			defer s.Close()
		}
	})
}

// A claim anchored in a hidden message: the message's body is in no export of any format,
// the graph's anchor node included (§ 18).
func TestHiddenAnchorInNoExport(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		mustClaim(t, f.svc, agent("alice", "read,write"), "assert", jsonOf(map[string]any{"thread": f.general, "parent": f.hidden,
			"statement": "the note says something", "evidence": json.RawMessage(proof)}))
		for _, format := range protocol.ExportFormatNames() {
			var buf bytes.Buffer
			if err := f.svc.WriteExport(context.Background(), 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(buf.Bytes(), []byte(f.hiddenBody)) {
				t.Errorf("the %s export holds the hidden anchor's body", format)
			}
		}
	})
}
