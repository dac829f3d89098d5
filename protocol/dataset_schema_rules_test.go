package protocol

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The schemas say what the rules say, as the rules' own tables hold it: each schema's $id
// under /v1/schema/, the evidence kinds with the forms of their refs, the states of threads
// and claims, the nine kinds, the fixed lengths, and each limit of § 8 at the place that
// carries it — the reference value in the file, this instance's in the schema served.
func TestDatasetSchemasSayWhatTheRulesSay(t *testing.T) {
	schemas := map[string]map[string]any{}
	for _, typ := range DatasetLineTypes {
		raw, ok := DatasetSchema(typ)
		if !ok {
			t.Fatalf("no schema for %s", typ)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s.json: %v", typ, err)
		}
		schemas[typ] = doc
		if doc["$id"] != "/v1/schema/"+typ+".json" || doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s.json: $id %v, $schema %v", typ, doc["$id"], doc["$schema"])
		}
	}
	at := func(typ, pointer string) any {
		var v any = schemas[typ]
		for _, name := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
			switch x := v.(type) {
			case map[string]any:
				v = x[name]
			case []any:
				var i int
				fmt.Sscan(name, &i)
				v = x[i]
			default:
				return nil
			}
		}
		return v
	}
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	equal := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the schema says %v, the rules %v", what, got, want)
		}
	}

	var kinds []string
	for _, k := range EvidenceKinds {
		kinds = append(kinds, k.Kind)
	}
	refForms := map[string]string{"hash": hashPattern.String(), "artifact": sha256Pattern.String(), "commit": commitPattern.String()}
	for _, typ := range []string{"claim", "stance"} {
		equal(typ+": evidence kinds", strs(at(typ, "/$defs/evidenceItem/properties/kind/enum")), kinds)
		equal(typ+": an evidence note's length", at(typ, "/$defs/evidenceItem/properties/note/maxLength"), evidenceNoteMaxChars)
		forms := map[string]string{}
		for _, rule := range at(typ, "/$defs/evidenceItem/allOf").([]any) {
			r := rule.(map[string]any)
			kind := r["if"].(map[string]any)["properties"].(map[string]any)["kind"].(map[string]any)["const"].(string)
			forms[kind] = fmt.Sprint(r["then"].(map[string]any)["properties"].(map[string]any)["ref"].(map[string]any)["pattern"])
		}
		for kind, form := range refForms {
			equal(typ+": the form of a "+kind+" ref", forms[kind], form)
		}
		if !strings.HasPrefix(forms["url"], "^https?://") {
			t.Errorf("%s: a url ref's form %q is not an http(s) URL's", typ, forms["url"])
		}
	}
	var threadStates []string
	for _, s := range AllStates() {
		threadStates = append(threadStates, string(s))
	}
	equal("thread states", strs(at("thread", "/properties/state/enum")), threadStates)
	equal("confirmed thread states", strs(at("thread", "/properties/confirmed_state/enum")), threadStates)
	var claimStates []string
	for _, s := range ClaimStates {
		claimStates = append(claimStates, string(s))
	}
	got := strs(at("claim", "/properties/state/enum"))
	slices.Sort(got)
	slices.Sort(claimStates)
	equal("claim states", got, claimStates)
	var messageKinds []string
	for _, k := range Kinds {
		messageKinds = append(messageKinds, string(k.Kind))
	}
	gotKinds := strs(at("message", "/properties/kind/enum"))
	slices.Sort(gotKinds)
	slices.Sort(messageKinds)
	equal("message kinds", gotKinds, messageKinds)
	for _, k := range messageKinds {
		if !slices.Contains(strs(at("event", "/properties/act/enum")), k) {
			t.Errorf("event acts lack the kind %s", k)
		}
	}
	for _, op := range []ClaimOp{OpAssert, OpAttest, OpRefute, OpVerify, OpSupersede, OpMark} {
		if !slices.Contains(strs(at("event", "/allOf/0/then/properties/act/enum")), string(op)) {
			t.Errorf("a claim's event acts lack %s", op)
		}
	}
	equal("a thread title's length", at("thread", "/properties/title/maxLength"), titleMaxChars)
	equal("a hide reason's length", at("message", "/properties/hidden/properties/reason/maxLength"), HideReasonMaxChars)

	// Each limit is where the table says, with its reference value; served with other limits,
	// the schema carries those.
	ref := DefaultLimits()
	other := DefaultLimits()
	for _, field := range other.fields() {
		*field += 7
	}
	for _, sl := range schemaLimits {
		found := 0
		for _, typ := range DatasetLineTypes {
			v := at(typ, sl.pointer)
			if v == nil {
				continue
			}
			found++
			equal(typ+".json "+sl.pointer, v, sl.limit(&ref))
			served, _ := DatasetSchemaFor(typ, other)
			var doc any
			if err := json.Unmarshal(served, &doc); err != nil {
				t.Fatal(err)
			}
			schemas["served"] = doc.(map[string]any)
			equal("served "+typ+".json "+sl.pointer, at("served", sl.pointer), sl.limit(&other))
		}
		if found == 0 {
			t.Errorf("no schema has %s", sl.pointer)
		}
	}
	for _, typ := range DatasetLineTypes {
		raw, _ := DatasetSchema(typ)
		if served, _ := DatasetSchemaFor(typ, ref); string(served) != string(raw) {
			t.Errorf("%s.json served with the reference limits is not the file", typ)
		}
	}
}
